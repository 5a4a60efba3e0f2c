package cluster

import (
	"encoding/binary"
	"fmt"

	"lockstep/internal/txlog"

	pb "go.etcd.io/raft/v3/raftpb"
)

// A raft entry is stored as one txlog record: the record header carries
// the entry's index and term, the payload is the entry type (one byte)
// followed by the entry's data.
func toRecord(e pb.Entry) txlog.Entry {
	p := make([]byte, 1+len(e.Data))
	p[0] = byte(e.Type)
	copy(p[1:], e.Data)
	return txlog.Entry{Index: e.Index, Term: e.Term, Payload: p}
}

func fromRecord(r txlog.Entry) (pb.Entry, error) {
	if len(r.Payload) == 0 {
		return pb.Entry{}, fmt.Errorf("cluster: log record %d has no entry type", r.Index)
	}
	t := pb.EntryType(r.Payload[0])
	switch t {
	case pb.EntryNormal, pb.EntryConfChange, pb.EntryConfChangeV2:
	default:
		return pb.Entry{}, fmt.Errorf("cluster: log record %d has unknown entry type %d", r.Index, r.Payload[0])
	}
	e := pb.Entry{Index: r.Index, Term: r.Term, Type: t}
	if len(r.Payload) > 1 {
		e.Data = r.Payload[1:]
	}
	return e, nil
}

// A normal entry proposed through a Node carries a proposal header before
// the application's data: 8 bytes, the proposal's id (the proposing node's
// incarnation and a counter), so that the proposer finds its entries in
// the Ready that appends them. raft's own empty entries (one per new term)
// have no data at all.
const propHeader = 8

func encodeProposal(id uint64, data []byte) []byte {
	b := make([]byte, propHeader+len(data))
	binary.LittleEndian.PutUint64(b, id)
	copy(b[propHeader:], data)
	return b
}

// decodeProposal splits a normal entry's data. ok is false for an entry
// with no data (raft's empty entry).
func decodeProposal(d []byte) (id uint64, data []byte, ok bool, err error) {
	if len(d) == 0 {
		return 0, nil, false, nil
	}
	if len(d) < propHeader {
		return 0, nil, false, fmt.Errorf("cluster: entry data of %d bytes is shorter than the proposal header", len(d))
	}
	return binary.LittleEndian.Uint64(d), d[propHeader:], true, nil
}
