package apply

import (
	"unsafe"

	"lockstep/internal/record"
)

// stepBytes is what a decoded step holds beyond its entry's payload (the
// byte strings of its changes, DDL text and accounts alias or copy little
// of the payload): its Step and record structs, a decoded transaction's
// changes, writeset and counters. A transaction decoded in chunks
// (record.Txn.Chunked) holds none of its changes: its executor decodes a
// chunk at a time. What the parallel driver bounds its queue by
// (MaxPendingBytes) is the payload plus this.
func stepBytes(s *Step) int64 {
	n := int64(unsafe.Sizeof(Step{}))
	switch {
	case s.Txn != nil:
		t := s.Txn
		n += int64(unsafe.Sizeof(record.Txn{})) +
			int64(len(t.Changes))*int64(unsafe.Sizeof(record.Change{})) +
			int64(len(t.Writeset))*8 +
			int64(len(t.AutoInc))*int64(unsafe.Sizeof(record.AutoInc{}))
	case s.DDL != nil:
		n += int64(unsafe.Sizeof(record.DDL{})) + int64(len(s.DDL.Database)+len(s.DDL.Query)) // DecodeDDL copies its strings
	case s.Accounts != nil:
		n += int64(unsafe.Sizeof(record.Accounts{}))
	}
	return n
}
