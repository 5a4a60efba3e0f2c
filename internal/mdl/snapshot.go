package mdl

import "sort"

// LockInfo is one lock of a Snapshot: granted, or asked for and waited for.
type LockInfo struct {
	Key     Key
	Owner   uint64 // the owner's id (NewOwner)
	Mode    Mode
	Pending bool // waited for, not granted
}

// Snapshot copies the lock table (performance_schema.metadata_locks):
// each holder's modes on each name (one entry per mode, as MySQL shows a
// ticket per lock), then each waiting owner's requests. It holds the manager's latch while it copies and costs the
// lock paths nothing. Sorted by name, granted first, then owner.
func (m *Manager) Snapshot() []LockInfo {
	m.mu.Lock()
	var out []LockInfo
	for k, l := range m.locks {
		for o, set := range l.holders {
			for md := SharedRead; md < numModes; md++ {
				if set&bit(md) != 0 {
					out = append(out, LockInfo{Key: k, Owner: o.id, Mode: md})
				}
			}
		}
	}
	for o := range m.waiting {
		for _, r := range o.waitingOn {
			out = append(out, LockInfo{Key: r.Key, Owner: o.id, Mode: r.Mode, Pending: true})
		}
	}
	m.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Key != b.Key {
			if a.Key.DB != b.Key.DB {
				return a.Key.DB < b.Key.DB
			}
			return a.Key.Table < b.Key.Table
		}
		if a.Pending != b.Pending {
			return !a.Pending
		}
		if a.Owner != b.Owner {
			return a.Owner < b.Owner
		}
		return a.Mode < b.Mode
	})
	return out
}
