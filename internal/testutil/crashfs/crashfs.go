// Package crashfs is an in-memory file layer (txlog.FS) that can crash:
// Crash keeps what a power failure would — file contents as of their last
// Sync, plus a random prefix of the writes made since (the last of which may
// be torn), and directory entries as of their directory's last SyncDir —
// and invalidates every file the crashed process had open. A seeded PRNG
// picks what survives, so a simulation replays from its seed.
//
// It models one machine's disk; the simulation gives each node its own.
package crashfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"lockstep/internal/txlog"
)

// ErrCrashed is returned by every operation on a file opened before a crash.
var ErrCrashed = errors.New("crashfs: the file was opened before a crash")

// FS is the in-memory file layer.
type FS struct {
	mu      sync.Mutex
	gen     int               // crash generation
	files   map[string]*inode // current namespace
	durable map[string]*inode // namespace as of each directory's last SyncDir
	dirs    map[string]bool
	syncs   int
	// SyncDelay, if set, is called before each file Sync (slow disks).
	SyncDelay func()
}

type write struct {
	off      int64
	data     []byte
	truncate bool // a Truncate to off
}

type inode struct {
	data    []byte
	synced  []byte
	pending []write // since the last Sync, in order
}

// New returns an empty file system.
func New() *FS {
	return &FS{files: map[string]*inode{}, durable: map[string]*inode{}, dirs: map[string]bool{"/": true, ".": true}}
}

var _ txlog.FS = (*FS)(nil)

// Syncs counts file Syncs so far.
func (f *FS) Syncs() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.syncs
}

// Crash simulates a power failure: see the package comment.
func (f *FS) Crash(rng *rand.Rand) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gen++
	names := make([]string, 0, len(f.durable))
	for name := range f.durable {
		names = append(names, name)
	}
	sort.Strings(names) // map order must not decide what the PRNG draws
	files := make(map[string]*inode, len(names))
	done := map[*inode]*inode{}
	for _, name := range names {
		old := f.durable[name]
		nd, ok := done[old]
		if !ok {
			nd = old.survive(rng)
			done[old] = nd
		}
		files[name] = nd
		f.durable[name] = nd
	}
	f.files = files
}

// survive is what a crash leaves of the file.
func (n *inode) survive(rng *rand.Rand) *inode {
	data := append([]byte(nil), n.synced...)
	k := 0
	if len(n.pending) > 0 {
		k = rng.IntN(len(n.pending) + 1)
	}
	for i, w := range n.pending {
		if i > k {
			break
		}
		if w.truncate {
			if i == k {
				break
			}
			data = resize(data, w.off)
			continue
		}
		b := w.data
		if i == k {
			b = b[:rng.IntN(len(b)+1)] // the write the crash interrupted
		}
		data = writeAt(data, b, w.off)
	}
	return &inode{data: data, synced: append([]byte(nil), data...)}
}

func resize(b []byte, n int64) []byte {
	if int64(len(b)) >= n {
		return b[:n]
	}
	return append(b, make([]byte, n-int64(len(b)))...)
}

func writeAt(b, p []byte, off int64) []byte {
	if end := off + int64(len(p)); end > int64(len(b)) {
		b = resize(b, end)
	}
	copy(b[off:], p)
	return b
}

func clean(name string) string { return filepath.Clean(name) }

func notExist(op, name string) error {
	return &os.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
}

// OpenFile implements txlog.FS.
func (f *FS) OpenFile(name string, flag int, perm os.FileMode) (txlog.File, error) {
	name = clean(name)
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.dirs[filepath.Dir(name)] {
		return nil, notExist("open", name)
	}
	n, ok := f.files[name]
	switch {
	case !ok && flag&os.O_CREATE == 0:
		return nil, notExist("open", name)
	case ok && flag&os.O_CREATE != 0 && flag&os.O_EXCL != 0:
		return nil, &os.PathError{Op: "open", Path: name, Err: fs.ErrExist}
	case !ok:
		n = &inode{}
		f.files[name] = n
	}
	if flag&os.O_TRUNC != 0 && len(n.data) > 0 {
		n.data = n.data[:0]
		n.pending = append(n.pending, write{off: 0, truncate: true})
	}
	return &file{fs: f, n: n, name: name, gen: f.gen, append: flag&os.O_APPEND != 0}, nil
}

// Remove implements txlog.FS.
func (f *FS) Remove(name string) error {
	name = clean(name)
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.files[name]; !ok {
		if f.dirs[name] {
			delete(f.dirs, name)
			return nil
		}
		return notExist("remove", name)
	}
	delete(f.files, name)
	return nil
}

// Rename implements txlog.FS.
func (f *FS) Rename(oldname, newname string) error {
	oldname, newname = clean(oldname), clean(newname)
	f.mu.Lock()
	defer f.mu.Unlock()
	n, ok := f.files[oldname]
	if !ok {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: fs.ErrNotExist}
	}
	delete(f.files, oldname)
	f.files[newname] = n
	return nil
}

// ReadDir implements txlog.FS.
func (f *FS) ReadDir(name string) ([]os.DirEntry, error) {
	name = clean(name)
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.dirs[name] {
		return nil, notExist("readdir", name)
	}
	var out []os.DirEntry
	for p, n := range f.files {
		if filepath.Dir(p) == name {
			out = append(out, dirEntry{info{name: filepath.Base(p), size: int64(len(n.data))}})
		}
	}
	for d := range f.dirs {
		if d != name && filepath.Dir(d) == name {
			out = append(out, dirEntry{info{name: filepath.Base(d), dir: true}})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, nil
}

// MkdirAll implements txlog.FS. Directories are durable at once.
func (f *FS) MkdirAll(path string, perm os.FileMode) error {
	path = clean(path)
	f.mu.Lock()
	defer f.mu.Unlock()
	for p := path; ; p = filepath.Dir(p) {
		f.dirs[p] = true
		if p == filepath.Dir(p) {
			break
		}
	}
	return nil
}

// SyncDir implements txlog.FS: the directory's entries become durable.
func (f *FS) SyncDir(name string) error {
	name = clean(name)
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.dirs[name] {
		return notExist("sync", name)
	}
	for p := range f.durable {
		if filepath.Dir(p) == name {
			if _, ok := f.files[p]; !ok {
				delete(f.durable, p)
			}
		}
	}
	for p, n := range f.files {
		if filepath.Dir(p) == name {
			f.durable[p] = n
		}
	}
	return nil
}

// Dump lists the files and their sizes (for a failing test's report).
func (f *FS) Dump() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var names []string
	for p, n := range f.files {
		names = append(names, fmt.Sprintf("%s %d (synced %d, %d pending)", p, len(n.data), len(n.synced), len(n.pending)))
	}
	sort.Strings(names)
	return strings.Join(names, "\n")
}

type file struct {
	fs     *FS
	n      *inode
	name   string
	gen    int
	off    int64
	append bool
	closed bool
}

func (fl *file) check() error {
	if fl.gen != fl.fs.gen {
		return &os.PathError{Op: "io", Path: fl.name, Err: ErrCrashed}
	}
	if fl.closed {
		return &os.PathError{Op: "io", Path: fl.name, Err: os.ErrClosed}
	}
	return nil
}

func (fl *file) Write(p []byte) (int, error) {
	fl.fs.mu.Lock()
	defer fl.fs.mu.Unlock()
	if err := fl.check(); err != nil {
		return 0, err
	}
	if fl.append {
		fl.off = int64(len(fl.n.data))
	}
	fl.put(p, fl.off)
	fl.off += int64(len(p))
	return len(p), nil
}

func (fl *file) WriteAt(p []byte, off int64) (int, error) {
	fl.fs.mu.Lock()
	defer fl.fs.mu.Unlock()
	if err := fl.check(); err != nil {
		return 0, err
	}
	fl.put(p, off)
	return len(p), nil
}

func (fl *file) put(p []byte, off int64) {
	fl.n.data = writeAt(fl.n.data, p, off)
	fl.n.pending = append(fl.n.pending, write{off: off, data: append([]byte(nil), p...)})
}

func (fl *file) ReadAt(p []byte, off int64) (int, error) {
	fl.fs.mu.Lock()
	defer fl.fs.mu.Unlock()
	if err := fl.check(); err != nil {
		return 0, err
	}
	if off >= int64(len(fl.n.data)) {
		return 0, io.EOF
	}
	k := copy(p, fl.n.data[off:])
	if k < len(p) {
		return k, io.EOF
	}
	return k, nil
}

func (fl *file) Sync() error {
	if d := fl.fs.SyncDelay; d != nil {
		d()
	}
	fl.fs.mu.Lock()
	defer fl.fs.mu.Unlock()
	if err := fl.check(); err != nil {
		return err
	}
	fl.fs.syncs++
	fl.n.synced = append(fl.n.synced[:0], fl.n.data...)
	fl.n.pending = nil
	return nil
}

func (fl *file) Truncate(size int64) error {
	fl.fs.mu.Lock()
	defer fl.fs.mu.Unlock()
	if err := fl.check(); err != nil {
		return err
	}
	fl.n.data = resize(fl.n.data, size)
	fl.n.pending = append(fl.n.pending, write{off: size, truncate: true})
	return nil
}

func (fl *file) Close() error {
	fl.fs.mu.Lock()
	defer fl.fs.mu.Unlock()
	fl.closed = true
	return nil
}

func (fl *file) Stat() (os.FileInfo, error) {
	fl.fs.mu.Lock()
	defer fl.fs.mu.Unlock()
	if err := fl.check(); err != nil {
		return nil, err
	}
	return info{name: filepath.Base(fl.name), size: int64(len(fl.n.data))}, nil
}

type info struct {
	name string
	size int64
	dir  bool
}

func (i info) Name() string { return i.name }
func (i info) Size() int64  { return i.size }
func (i info) Mode() os.FileMode {
	if i.dir {
		return os.ModeDir | 0o700
	}
	return 0o600
}
func (i info) ModTime() time.Time { return time.Time{} }
func (i info) IsDir() bool        { return i.dir }
func (i info) Sys() any           { return nil }

type dirEntry struct{ i info }

func (d dirEntry) Name() string               { return d.i.name }
func (d dirEntry) IsDir() bool                { return d.i.dir }
func (d dirEntry) Type() os.FileMode          { return d.i.Mode().Type() }
func (d dirEntry) Info() (os.FileInfo, error) { return d.i, nil }
