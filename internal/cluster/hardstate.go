package cluster

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"lockstep/internal/txlog"

	pb "go.etcd.io/raft/v3/raftpb"
)

// The raft-state file holds what raft must find again after a crash beside
// the log: the hard state and the metadata of the snapshot the log starts
// after. It is small and rewritten whole: a temporary file, fsynced, renamed
// over the old one, the directory fsynced. It is written when the term or
// the vote changes (they must be durable before any message that depends on
// them leaves), when a snapshot is installed, and now and then for the
// commit index, which raft may relearn and is never written ahead of the
// durable log.
//
// Format, little-endian:
//
//	 0  magic     [8]byte "LKSTRAFT"
//	 8  version   u16 (1)
//	10  reserved  u16
//	12  term      u64
//	20  vote      u64
//	28  commit    u64
//	36  snapIndex u64
//	44  snapTerm  u64
//	52  confLen   u32
//	56  conf      [confLen]byte the snapshot's ConfState (raftpb encoding)
//	..  crc       u32 CRC32C of everything before it
const (
	stateFile     = "raft-state"
	stateMagic    = "LKSTRAFT"
	stateVersion  = 1
	stateFixedLen = 56
)

// persisted is the content of the raft-state file.
type persisted struct {
	hs   pb.HardState
	snap pb.SnapshotMetadata
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (p persisted) encode() ([]byte, error) {
	conf, err := p.snap.ConfState.Marshal()
	if err != nil {
		return nil, fmt.Errorf("cluster: encoding the snapshot's membership: %w", err)
	}
	b := make([]byte, stateFixedLen+len(conf)+4)
	copy(b, stateMagic)
	binary.LittleEndian.PutUint16(b[8:], stateVersion)
	binary.LittleEndian.PutUint64(b[12:], p.hs.Term)
	binary.LittleEndian.PutUint64(b[20:], p.hs.Vote)
	binary.LittleEndian.PutUint64(b[28:], p.hs.Commit)
	binary.LittleEndian.PutUint64(b[36:], p.snap.Index)
	binary.LittleEndian.PutUint64(b[44:], p.snap.Term)
	binary.LittleEndian.PutUint32(b[52:], uint32(len(conf)))
	copy(b[stateFixedLen:], conf)
	n := stateFixedLen + len(conf)
	binary.LittleEndian.PutUint32(b[n:], crc32.Checksum(b[:n], castagnoli))
	return b, nil
}

func decodePersisted(b []byte, file string) (persisted, error) {
	bad := func(why string) (persisted, error) {
		return persisted{}, fmt.Errorf("cluster: %s: %s", file, why)
	}
	if len(b) < stateFixedLen+4 || string(b[:8]) != stateMagic {
		return bad("not a raft-state file")
	}
	if v := binary.LittleEndian.Uint16(b[8:]); v != stateVersion {
		return bad(fmt.Sprintf("format version %d, this binary reads %d", v, stateVersion))
	}
	n := stateFixedLen + int(binary.LittleEndian.Uint32(b[52:]))
	if n+4 != len(b) {
		return bad(fmt.Sprintf("%d bytes, the header says %d", len(b), n+4))
	}
	if binary.LittleEndian.Uint32(b[n:]) != crc32.Checksum(b[:n], castagnoli) {
		return bad("checksum mismatch")
	}
	var p persisted
	p.hs.Term = binary.LittleEndian.Uint64(b[12:])
	p.hs.Vote = binary.LittleEndian.Uint64(b[20:])
	p.hs.Commit = binary.LittleEndian.Uint64(b[28:])
	p.snap.Index = binary.LittleEndian.Uint64(b[36:])
	p.snap.Term = binary.LittleEndian.Uint64(b[44:])
	if err := p.snap.ConfState.Unmarshal(b[stateFixedLen:n]); err != nil {
		return bad(fmt.Sprintf("membership: %v", err))
	}
	return p, nil
}

// readPersisted reads dir's raft-state file; a missing file is an empty
// state (a node that never ran).
func readPersisted(fsys txlog.FS, dir string) (persisted, bool, error) {
	name := filepath.Join(dir, stateFile)
	f, err := fsys.OpenFile(name, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return persisted{}, false, nil
	}
	if err != nil {
		return persisted{}, false, fmt.Errorf("cluster: opening %s: %w", name, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return persisted{}, false, fmt.Errorf("cluster: %s: %w", name, err)
	}
	b := make([]byte, info.Size())
	if _, err := f.ReadAt(b, 0); err != nil && !errors.Is(err, io.EOF) {
		return persisted{}, false, fmt.Errorf("cluster: reading %s: %w", name, err)
	}
	p, err := decodePersisted(b, name)
	return p, true, err
}

// writePersisted replaces dir's raft-state file with p, durably.
func writePersisted(fsys txlog.FS, dir string, p persisted) error {
	b, err := p.encode()
	if err != nil {
		return err
	}
	name := filepath.Join(dir, stateFile)
	tmp := name + ".tmp"
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("cluster: creating %s: %w", tmp, err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("cluster: writing %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("cluster: fsync of %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("cluster: closing %s: %w", tmp, err)
	}
	if err := fsys.Rename(tmp, name); err != nil {
		return fmt.Errorf("cluster: renaming %s: %w", tmp, err)
	}
	if err := fsys.SyncDir(dir); err != nil {
		return fmt.Errorf("cluster: fsync of %s: %w", dir, err)
	}
	return nil
}
