package txlog

import (
	"io"
	"os"
)

// FS is the file layer under the log. OSFS is the real one; tests inject
// failures (fsync errors, ENOSPC) through their own.
type FS interface {
	OpenFile(name string, flag int, perm os.FileMode) (File, error)
	Remove(name string) error
	Rename(oldname, newname string) error
	ReadDir(name string) ([]os.DirEntry, error)
	MkdirAll(path string, perm os.FileMode) error
	// SyncDir makes the directory's entries (created, renamed, removed
	// files) durable.
	SyncDir(name string) error
}

// File is an open segment file.
type File interface {
	io.Writer
	io.WriterAt
	io.ReaderAt
	// Sync makes the file's data durable, with the metadata needed to read
	// it back (its size): fdatasync(2) on Linux, fsync elsewhere. A segment
	// written inside its preallocated length changes no such metadata, so
	// its syncs commit no file system journal.
	Sync() error
	Truncate(size int64) error
	Close() error
	Stat() (os.FileInfo, error)
}

// OSFS is FS on the operating system's files.
type OSFS struct{}

func (OSFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

// osFile is an operating system file whose Sync is datasync.
type osFile struct{ *os.File }

func (f osFile) Sync() error { return datasync(f.File) }

func (OSFS) Remove(name string) error                     { return os.Remove(name) }
func (OSFS) Rename(oldname, newname string) error         { return os.Rename(oldname, newname) }
func (OSFS) ReadDir(name string) ([]os.DirEntry, error)   { return os.ReadDir(name) }
func (OSFS) MkdirAll(path string, perm os.FileMode) error { return os.MkdirAll(path, perm) }

func (OSFS) SyncDir(name string) error {
	d, err := os.Open(name)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
