package mdl

import "math/bits"

// Mode is a lock's kind, MySQL's names for the ones lockstep takes.
type Mode uint8

const (
	None Mode = iota
	// SharedRead (SHARED_READ): a statement that reads the table's rows.
	SharedRead
	// SharedWrite (SHARED_WRITE): a statement that writes them. Reads and
	// writes are compatible with each other (row locks order them).
	SharedWrite
	// SharedReadOnly (SHARED_READ_ONLY): LOCK TABLES ... READ. Others
	// may read; their writes and DDL wait.
	SharedReadOnly
	// SharedNoReadWrite (SHARED_NO_READ_WRITE): LOCK TABLES ... WRITE.
	// Others' reads, writes and DDL wait.
	SharedNoReadWrite
	// Exclusive (EXCLUSIVE): DDL changing the table's definition or name;
	// compatible with nothing of another owner.
	Exclusive
	numModes
)

// Shared is the mode of a plain use of a table (SharedRead).
const Shared = SharedRead

func (m Mode) String() string {
	switch m {
	case SharedRead:
		return "SHARED_READ"
	case SharedWrite:
		return "SHARED_WRITE"
	case SharedReadOnly:
		return "SHARED_READ_ONLY"
	case SharedNoReadWrite:
		return "SHARED_NO_READ_WRITE"
	case Exclusive:
		return "EXCLUSIVE"
	}
	return "NONE"
}

// Includes reports whether holding m gives all that holding o gives. The
// modes are ordered by strength, except that neither SharedWrite nor
// SharedReadOnly includes the other: an owner that needs both holds both
// (LOCK TABLES t READ of a table one of its triggers writes).
func (m Mode) Includes(o Mode) bool {
	if (m == SharedWrite && o == SharedReadOnly) || (m == SharedReadOnly && o == SharedWrite) {
		return false
	}
	return m >= o
}

// modeSet is a set of modes, bit 1<<m for mode m.
type modeSet uint8

func bit(m Mode) modeSet { return 1 << m }

// strongest is the set's strongest mode (by the order of the constants;
// SharedWrite and SharedReadOnly are not ordered — see Includes — and a set
// holding both names SharedReadOnly).
func (s modeSet) strongest() Mode {
	if s == 0 {
		return None
	}
	return Mode(bits.Len8(uint8(s)) - 1)
}

const (
	sr, sw, sro, snrw, x = modeSet(1 << SharedRead), modeSet(1 << SharedWrite),
		modeSet(1 << SharedReadOnly), modeSet(1 << SharedNoReadWrite), modeSet(1 << Exclusive)
	allModes = sr | sw | sro | snrw | x
)

// grantedConflicts[r]: the modes granted to another owner that make a
// request for r wait (MySQL's matrix for granted locks, restricted to
// these modes).
var grantedConflicts = [numModes]modeSet{
	SharedRead:        snrw | x,
	SharedWrite:       sro | snrw | x,
	SharedReadOnly:    sw | snrw | x,
	SharedNoReadWrite: allModes,
	Exclusive:         allModes,
}

// pendingConflicts[r]: the modes another owner waits for that make a
// request for r wait behind it: a stream of reads cannot starve DDL or
// LOCK TABLES ... WRITE, and as in MySQL a waiting write goes before a new
// LOCK TABLES ... READ (write requests have the priority). The relation
// has no cycle (a request only queues behind a stronger kind), so two
// waiters never find a deadlock in each other's queueing alone. Not
// applied to a name the requester already holds (see Owner.Acquire).
var pendingConflicts = [numModes]modeSet{
	SharedRead:        snrw | x,
	SharedWrite:       snrw | x,
	SharedReadOnly:    sw | snrw | x,
	SharedNoReadWrite: x,
	Exclusive:         0,
}

// covers[r]: the modes that include r (holding one of them, a request for
// r is granted already).
var covers = [numModes]modeSet{
	SharedRead:        sr | sw | sro | snrw | x,
	SharedWrite:       sw | snrw | x,
	SharedReadOnly:    sro | snrw | x,
	SharedNoReadWrite: snrw | x,
	Exclusive:         x,
}

// counts is how many owners hold (or wait for) each mode of a name, with
// the set of modes whose count is not zero.
type counts struct {
	n   [numModes]int32
	set modeSet
}

// change moves one owner's modes from old to new.
func (c *counts) change(old, new modeSet) {
	for d := old ^ new; d != 0; d &= d - 1 {
		m := Mode(bits.TrailingZeros8(uint8(d)))
		if new&bit(m) != 0 {
			c.n[m]++
			c.set |= bit(m)
		} else if c.n[m]--; c.n[m] == 0 {
			c.set &^= bit(m)
		}
	}
}

// others reports whether an owner other than the one holding own has a
// mode of want.
func (c *counts) others(want, own modeSet) bool {
	hit := c.set & want
	if hit&^own != 0 {
		return true
	}
	for ; hit != 0; hit &= hit - 1 {
		if c.n[bits.TrailingZeros8(uint8(hit))] > 1 {
			return true
		}
	}
	return false
}
