package crashfs

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"testing"
)

func read(t *testing.T, f *FS, name string) ([]byte, bool) {
	t.Helper()
	fl, err := f.OpenFile(name, os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	info, _ := fl.Stat()
	b := make([]byte, info.Size())
	if _, err := fl.ReadAt(b, 0); err != nil && err != io.EOF {
		t.Fatal(err)
	}
	return b, true
}

func TestCrash(t *testing.T) {
	for seed := uint64(1); seed <= 50; seed++ {
		f := New()
		f.MkdirAll("/d", 0o700)
		a, _ := f.OpenFile("/d/a", os.O_RDWR|os.O_CREATE, 0o600)
		a.Write([]byte("synced"))
		a.Sync()
		f.SyncDir("/d")
		a.Write([]byte("-unsynced"))
		c, _ := f.OpenFile("/d/c.tmp", os.O_RDWR|os.O_CREATE, 0o600)
		c.Write([]byte("c"))
		c.Sync()
		f.SyncDir("/d")
		b, _ := f.OpenFile("/d/b", os.O_RDWR|os.O_CREATE, 0o600) // its directory is not synced after
		b.Write([]byte("b"))
		b.Sync()
		f.Rename("/d/c.tmp", "/d/c") // not made durable

		f.Crash(rand.New(rand.NewPCG(seed, 0)))

		got, ok := read(t, f, "/d/a")
		if !ok || !bytes.HasPrefix(got, []byte("synced")) || !bytes.HasPrefix([]byte("synced-unsynced"), got) {
			t.Fatalf("seed %d: a = %q, %v: want the synced bytes and a prefix of the rest", seed, got, ok)
		}
		if _, ok := read(t, f, "/d/b"); ok {
			t.Fatalf("seed %d: b survived though its directory entry was never synced", seed)
		}
		if _, ok := read(t, f, "/d/c"); ok {
			t.Fatalf("seed %d: the rename to c survived without a directory sync", seed)
		}
		if got, _ := read(t, f, "/d/c.tmp"); string(got) != "c" {
			t.Fatalf("seed %d: c.tmp = %q", seed, got)
		}
		if _, err := a.Write([]byte("x")); !errors.Is(err, ErrCrashed) {
			t.Fatalf("seed %d: a file opened before the crash wrote: %v", seed, err)
		}
	}
}

// TestCrashTears: across seeds, a crash keeps none, part and all of the
// unsynced writes.
func TestCrashTears(t *testing.T) {
	lens := map[int]bool{}
	for seed := uint64(1); seed <= 200; seed++ {
		f := New()
		f.MkdirAll("/d", 0o700)
		a, _ := f.OpenFile("/d/a", os.O_RDWR|os.O_CREATE, 0o600)
		f.SyncDir("/d")
		a.Write([]byte("0123456789"))
		f.Crash(rand.New(rand.NewPCG(seed, 1)))
		got, _ := read(t, f, "/d/a")
		lens[len(got)] = true
	}
	if !lens[0] || !lens[10] || len(lens) < 5 {
		t.Fatalf("lengths kept after crashes: %v", lens)
	}
}
