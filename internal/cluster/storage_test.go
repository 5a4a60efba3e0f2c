package cluster

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lockstep/internal/testutil/crashfs"
	"lockstep/internal/txlog"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

func openTestStorage(t *testing.T, fs txlog.FS) *Storage {
	t.Helper()
	st, err := OpenStorage(StorageOptions{Dir: "/n", FS: fs, Log: txlog.Options{SegmentSize: 1 << 10, MarkInterval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func ents(term uint64, from, to uint64) []pb.Entry {
	var out []pb.Entry
	for i := from; i <= to; i++ {
		out = append(out, pb.Entry{Index: i, Term: term, Data: encodeProposal(i, []byte(strings.Repeat("x", int(i%7))))})
	}
	return out
}

func mustAppend(t *testing.T, st *Storage, es []pb.Entry) {
	t.Helper()
	lsn, err := st.append(es)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.waitDurable(lsn); err != nil {
		t.Fatal(err)
	}
}

// TestStorage walks raft's Storage contract over the log: bootstrap, reads,
// a conflicting tail replaced, the hard state across a reopen.
func TestStorage(t *testing.T) {
	fs := crashfs.New()
	st := openTestStorage(t, fs)
	if _, err := st.Snapshot(); !errors.Is(err, raft.ErrSnapshotTemporarilyUnavailable) {
		t.Fatalf("snapshot of a never-used storage: %v", err)
	}
	if err := st.Bootstrap([]uint64{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if err := st.Bootstrap([]uint64{1}); err == nil {
		t.Fatal("a second bootstrap was accepted")
	}
	hs, cs, _ := st.InitialState()
	if hs.Term != 1 || hs.Commit != 1 || len(cs.Voters) != 3 {
		t.Fatalf("after bootstrap: %+v %+v", hs, cs)
	}
	first, _ := st.FirstIndex()
	last, _ := st.LastIndex()
	if first != 2 || last != 1 {
		t.Fatalf("after bootstrap first %d last %d, want 2 and 1", first, last)
	}
	if term, err := st.Term(1); err != nil || term != 1 {
		t.Fatalf("Term(1) = %d, %v", term, err)
	}
	if _, err := st.Term(0); !errors.Is(err, raft.ErrCompacted) {
		t.Fatalf("Term(0): %v", err)
	}
	if _, err := st.Entries(1, 2, math.MaxUint64); !errors.Is(err, raft.ErrCompacted) {
		t.Fatalf("Entries(1, 2): %v", err)
	}

	mustAppend(t, st, ents(2, 2, 100))
	got, err := st.Entries(2, 101, math.MaxUint64)
	if err != nil || len(got) != 99 || got[98].Index != 100 || got[0].Term != 2 {
		t.Fatalf("Entries(2, 101): %d entries, %v", len(got), err)
	}
	if got, _ := st.Entries(2, 101, 1); len(got) != 1 {
		t.Fatalf("Entries with a 1-byte limit gave %d entries, want 1", len(got))
	}
	if _, err := st.Entries(2, 102, math.MaxUint64); !errors.Is(err, raft.ErrUnavailable) {
		t.Fatalf("Entries beyond the end: %v", err)
	}

	// A new leader's entries replace the tail from 51 on.
	mustAppend(t, st, ents(3, 51, 60))
	if last, _ := st.LastIndex(); last != 60 {
		t.Fatalf("last index after the replacement: %d", last)
	}
	for _, c := range []struct{ i, term uint64 }{{50, 2}, {51, 3}, {60, 3}} {
		if term, err := st.Term(c.i); err != nil || term != c.term {
			t.Fatalf("Term(%d) = %d, %v; want %d", c.i, term, err, c.term)
		}
	}

	// Term and vote are written at once; the commit index alone only every
	// commitEvery entries, and never beyond the log.
	if err := st.saveHardState(pb.HardState{Term: 3, Vote: 2, Commit: 40}, 100); err != nil {
		t.Fatal(err)
	}
	if err := st.saveHardState(pb.HardState{Term: 3, Vote: 2, Commit: 55}, 100); err != nil {
		t.Fatal(err)
	}
	if p := st.persistedState(); p.hs != (pb.HardState{Term: 3, Vote: 2, Commit: 40}) {
		t.Fatalf("persisted %+v, want term 3 vote 2 commit 40", p.hs)
	}
	if err := st.saveHardState(pb.HardState{}, 10); err != nil { // the commit moved 15 since
		t.Fatal(err)
	}
	if p := st.persistedState(); p.hs.Commit != 55 {
		t.Fatalf("commit persisted %d, want 55", p.hs.Commit)
	}
	st.Close()

	st = openTestStorage(t, fs)
	defer st.Close()
	hs, _, _ = st.InitialState()
	if hs != (pb.HardState{Term: 3, Vote: 2, Commit: 55}) {
		t.Fatalf("after reopen: %+v", hs)
	}
	if last, _ := st.LastIndex(); last != 60 {
		t.Fatalf("last index after reopen: %d", last)
	}
}

// TestStorageRefuses: a damaged raft-state file, and a raft state whose
// commit index the log does not reach, are refused at open.
func TestStorageRefuses(t *testing.T) {
	dir := t.TempDir()
	open := func() (*Storage, error) {
		return OpenStorage(StorageOptions{Dir: dir, Log: txlog.Options{MarkInterval: -1}})
	}
	st, err := open()
	if err != nil {
		t.Fatal(err)
	}
	st.Bootstrap([]uint64{1})
	mustAppend(t, st, ents(1, 2, 10))
	st.saveHardState(pb.HardState{Term: 1, Commit: 10}, 1)
	st.Close()

	name := filepath.Join(dir, stateFile)
	good, _ := os.ReadFile(name)
	bad := append([]byte(nil), good...)
	bad[30] ^= 1
	os.WriteFile(name, bad, 0o600)
	if _, err := open(); err == nil || !strings.Contains(err.Error(), "checksum mismatch") {
		t.Fatalf("a damaged raft-state file: %v", err)
	}

	p, _ := decodePersisted(good, name)
	p.hs.Commit = 11
	b, _ := p.encode()
	os.WriteFile(name, b, 0o600)
	if _, err := open(); err == nil || !strings.Contains(err.Error(), "committed entries are missing") {
		t.Fatalf("a commit index beyond the log: %v", err)
	}
}

// TestStorageCloseSavesCommit: a clean close records the newest commit
// index, which saveHardState keeps only now and then.
func TestStorageCloseSavesCommit(t *testing.T) {
	fs := crashfs.New()
	st := openTestStorage(t, fs)
	st.Bootstrap([]uint64{1})
	mustAppend(t, st, ents(1, 2, 50))
	if err := st.saveHardState(pb.HardState{Term: 1, Commit: 40}, 1000); err != nil {
		t.Fatal(err)
	}
	if p := st.persistedState(); p.hs.Commit != 1 {
		t.Fatalf("commit persisted before close: %d, want 1 (saved lazily)", p.hs.Commit)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st = openTestStorage(t, fs)
	defer st.Close()
	if hs, _, _ := st.InitialState(); hs.Commit != 40 {
		t.Fatalf("commit after a clean close and reopen: %d, want 40", hs.Commit)
	}
}
