package txlog

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
)

// faultFS is the OS file layer with injectable faults: every segment file's
// Sync fails once syncErr is set, and writes fail with ENOSPC once the
// space budget (when limited) is used up. It counts Sync calls.
type faultFS struct {
	OSFS
	syncErr   atomic.Pointer[error]
	syncCalls atomic.Int64
	limited   atomic.Bool
	spaceLeft atomic.Int64
	// spareRoom, when positive, is the space each preallocated spare file
	// gets: its writes past it fail with ENOSPC (and use no shared space).
	spareRoom atomic.Int64
}

func (fs *faultFS) failSyncs(err error) { fs.syncErr.Store(&err) }

func (fs *faultFS) limitSpace(n int64) {
	fs.spaceLeft.Store(n)
	fs.limited.Store(true)
}

func (fs *faultFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	ff := &faultFile{File: f, fs: fs}
	if n := fs.spareRoom.Load(); n > 0 && strings.HasPrefix(filepath.Base(name), spareNamePrefix) {
		ff.own = new(atomic.Int64)
		ff.own.Store(n)
	}
	return ff, nil
}

type faultFile struct {
	*os.File
	fs  *faultFS
	own *atomic.Int64 // the file's own space budget, if it has one
}

func (f *faultFile) Sync() error {
	f.fs.syncCalls.Add(1)
	if e := f.fs.syncErr.Load(); e != nil {
		return &os.PathError{Op: "sync", Path: f.Name(), Err: *e}
	}
	return f.File.Sync()
}

// room returns how many of n bytes fit in the space budget.
func (f *faultFile) room(n int) int {
	budget := &f.fs.spaceLeft
	switch {
	case f.own != nil:
		budget = f.own
	case !f.fs.limited.Load():
		return n
	}
	for {
		left := budget.Load()
		take := min(int64(n), left)
		if budget.CompareAndSwap(left, left-take) {
			return int(take)
		}
	}
}

func (f *faultFile) WriteAt(b []byte, off int64) (int, error) {
	n := f.room(len(b))
	w, err := f.File.WriteAt(b[:n], off)
	if err == nil && n < len(b) {
		err = &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	return w, err
}

func (f *faultFile) Write(b []byte) (int, error) {
	n := f.room(len(b))
	w, err := f.File.Write(b[:n])
	if err == nil && n < len(b) {
		err = &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	return w, err
}
