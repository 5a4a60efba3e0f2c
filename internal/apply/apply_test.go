package apply

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"lockstep/internal/record"
)

func txn(seq, gno int64) []byte {
	return record.AppendTxn(nil, &record.Txn{Position: record.Position{Seq: seq, GNO: gno, LastCommitted: seq - 1}})
}

func ddl(seq, gno int64, q string) []byte {
	return record.AppendDDL(nil, &record.DDL{Position: record.Position{Seq: seq, GNO: gno, LastCommitted: seq - 1}, Query: q})
}

func failedMark(q string) (int64, bool) {
	var n int64
	if _, err := fmt.Sscanf(q, "failed %d", &n); err == nil {
		return n, true
	}
	return 0, false
}

// fakeExec records what it is asked; DDL whose text starts with "bad"
// fails as a statement; a transaction with seq failTxn fails the applier.
type fakeExec struct {
	log     []string
	failTxn int64
}

func (x *fakeExec) Txn(t *record.Txn) error {
	if t.Seq == x.failTxn {
		return errors.New("boom")
	}
	x.log = append(x.log, fmt.Sprintf("txn %d/%d", t.Seq, t.GNO))
	return nil
}
func (x *fakeExec) DDL(d *record.DDL) (error, error) {
	x.log = append(x.log, "ddl "+d.Query)
	if strings.HasPrefix(d.Query, "bad") {
		return errors.New("stmt failed"), nil
	}
	return nil, nil
}
func (x *fakeExec) UndoDDL(m *record.DDL) error { x.log = append(x.log, "undo "+m.Query); return nil }
func (x *fakeExec) Accounts(a *record.Accounts) error {
	x.log = append(x.log, "accounts")
	return nil
}
func (x *fakeExec) Note(l string) { x.log = append(x.log, "note") }

type entry struct {
	index uint64
	recs  [][]byte // nil: an empty entry; one: a single record; more: a batch
}

func payload(e entry) []byte {
	switch len(e.recs) {
	case 0:
		return nil
	case 1:
		return e.recs[0]
	}
	return record.AppendBatch(nil, e.recs...)
}

func TestMachine(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    Options
		entries []entry
		want    []string
		applied Position
		gtid    string
		err     string
	}{
		{
			name:    "index, seq and GNO apart; groups and empty entries",
			opts:    Options{Applied: Position{Seq: 10}, ExecutedGNO: 110},
			entries: []entry{{5, nil}, {6, [][]byte{txn(11, 111), txn(12, 112)}}, {7, nil}, {8, [][]byte{txn(13, 113)}}, {9, nil}},
			want:    []string{"txn 11/111", "txn 12/112", "txn 13/113"},
			applied: Position{Index: 9, Seq: 13}, gtid: "1-113",
		},
		{
			name:    "records the checkpoint holds are skipped by GNO",
			opts:    Options{Applied: Position{Seq: 2}, ExecutedGNO: 2},
			entries: []entry{{1, [][]byte{txn(1, 1), txn(2, 2), txn(3, 3)}}, {2, [][]byte{txn(4, 4)}}},
			want:    []string{"txn 3/3", "txn 4/4"},
			applied: Position{Index: 2, Seq: 4}, gtid: "1-4",
		},
		{
			name:    "a duplicate delivery is ignored",
			entries: []entry{{1, [][]byte{txn(1, 1)}}, {2, [][]byte{txn(2, 2)}}, {2, [][]byte{txn(2, 2)}}, {1, [][]byte{txn(1, 1)}}, {3, [][]byte{txn(3, 3)}}},
			want:    []string{"txn 1/1", "txn 2/2", "txn 3/3"},
			applied: Position{Index: 3, Seq: 3}, gtid: "1-3",
		},
		{
			name:    "a record delivered again in a later entry is skipped",
			entries: []entry{{1, [][]byte{txn(1, 1)}}, {2, [][]byte{txn(1, 1), txn(2, 2)}}},
			want:    []string{"txn 1/1", "txn 2/2"},
			applied: Position{Index: 2, Seq: 2}, gtid: "1-2",
		},
		{
			name:    "a missing sequence number stops it",
			opts:    Options{Applied: Position{Seq: 3}, ExecutedGNO: 3},
			entries: []entry{{1, [][]byte{txn(5, 5)}}},
			err:     "sequence number 5 follows 3",
			applied: Position{Seq: 3}, gtid: "1-3",
		},
		{
			name:    "a missing entry stops it",
			entries: []entry{{1, [][]byte{txn(1, 1)}}, {3, [][]byte{txn(2, 2)}}},
			want:    []string{"txn 1/1"},
			err:     "log index 3 follows 1",
			applied: Position{Index: 1, Seq: 1}, gtid: "1",
		},
		{
			name: "DDL, its failure mark, a checkpoint marker, a failed statement without a mark",
			opts: Options{FailedDDL: failedMark},
			entries: []entry{
				{1, [][]byte{ddl(1, 1, "create a")}},
				{2, [][]byte{txn(2, 2), ddl(3, 3, "failed 1")}}, // replayed fine, failed on the source: undo
				{3, [][]byte{ddl(4, 4, "bad b")}},
				{4, [][]byte{ddl(5, 5, "")}},                             // marker settles "bad b": a note
				{5, [][]byte{ddl(6, 6, "bad c"), ddl(7, 7, "failed 6")}}, // failed both times: undo, no note
				{6, [][]byte{ddl(8, 8, "failed 99")}},                    // a mark of a statement before the start
			},
			want:    []string{"ddl create a", "txn 2/2", "undo failed 1", "note", "ddl bad b", "note", "ddl bad c", "undo failed 6"},
			applied: Position{Index: 6, Seq: 8}, gtid: "1-8",
		},
		{
			name:    "a failed step leaves the position before it",
			entries: []entry{{1, [][]byte{txn(1, 1), txn(2, 2)}}, {2, [][]byte{txn(3, 3)}}},
			want:    []string{"txn 1/1"},
			err:     "sequence number 2, GNO 2): boom",
			applied: Position{Index: 0, Seq: 1}, gtid: "1",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New(tc.opts)
			x := &fakeExec{}
			if strings.Contains(tc.name, "failed step") {
				x.failTxn = 2
			}
			var err error
			for _, e := range tc.entries {
				if err = m.Entry(e.index, payload(e)); err != nil {
					break
				}
				if err = Drain(m, x); err != nil {
					break
				}
			}
			if err == nil {
				if n := m.Settle(); n != "" {
					x.Note(n)
				}
			}
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("error %v, want %q", err, tc.err)
			}
			if got, want := strings.Join(x.log, ", "), strings.Join(tc.want, ", "); got != want {
				t.Errorf("steps %q\nwant  %q", got, want)
			}
			if got := m.Applied(); got != tc.applied {
				t.Errorf("applied %+v, want %+v", got, tc.applied)
			}
			if got := m.ExecutedSet(); got != tc.gtid {
				t.Errorf("executed %q, want %q", got, tc.gtid)
			}
		})
	}
}

// TestContiguousPrefix: Done out of order (what a parallel applier will
// do) advances the applied position only over the contiguous prefix, of
// sequence numbers and of entries.
func TestContiguousPrefix(t *testing.T) {
	m := New(Options{})
	if err := m.Entry(1, record.AppendBatch(nil, txn(1, 1), txn(2, 2))); err != nil {
		t.Fatal(err)
	}
	if err := m.Entry(2, nil); err != nil {
		t.Fatal(err)
	}
	if err := m.Entry(3, txn(3, 3)); err != nil {
		t.Fatal(err)
	}
	// Take the steps out of the queue as a scheduler would.
	var steps []Step
	for len(m.queue) > 0 {
		steps = append(steps, m.queue[0])
		m.queue = m.queue[1:]
		m.inflight++
	}
	for _, c := range []struct {
		done int
		want Position
	}{
		{2, Position{0, 0}}, // seq 3 first: nothing contiguous
		{1, Position{0, 0}}, // seq 2: still waiting for 1
		{0, Position{3, 3}}, // seq 1: everything, the empty entry 2 included
	} {
		m.Done(steps[c.done], nil)
		if got := m.Applied(); got != c.want {
			t.Fatalf("after Done(seq %d): applied %+v, want %+v", steps[c.done].Pos.Seq, got, c.want)
		}
	}
	if !m.Idle() || m.ExecutedSet() != "1-3" {
		t.Fatalf("idle %v, executed %q", m.Idle(), m.ExecutedSet())
	}
}

func TestGNOSet(t *testing.T) {
	var s gnoSet
	for _, r := range [][2]int64{{1, 3}, {7, 7}, {5, 5}, {4, 4}, {10, 12}, {9, 9}, {2, 11}} {
		s.add(r[0], r[1])
	}
	if got := s.String(); got != "1-12" {
		t.Fatalf("%q", got)
	}
	var u gnoSet
	u.add(5, 6)
	u.add(1, 2)
	u.add(9, 9)
	if got := u.String(); got != "1-2:5-6:9" || u.has(3) || !u.has(6) || u.max() != 9 {
		t.Fatalf("%q", got)
	}
}
