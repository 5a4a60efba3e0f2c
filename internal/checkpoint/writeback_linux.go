package checkpoint

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback asks the kernel to begin writing [off, off+n) of f to disk
// and returns without waiting.
func startWriteback(f *os.File, off, n int64) error {
	if err := unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE); err != nil {
		return &os.PathError{Op: "sync_file_range", Path: f.Name(), Err: err}
	}
	return nil
}

// finishWriteback waits until [off, off+n) of f is on disk and drops its
// pages from the page cache. It is not a durability point: the final fsync
// is (sync_file_range does not flush the disk's cache or the metadata).
func finishWriteback(f *os.File, off, n int64) error {
	const wait = unix.SYNC_FILE_RANGE_WAIT_BEFORE | unix.SYNC_FILE_RANGE_WRITE | unix.SYNC_FILE_RANGE_WAIT_AFTER
	if err := unix.SyncFileRange(int(f.Fd()), off, n, wait); err != nil {
		return &os.PathError{Op: "sync_file_range", Path: f.Name(), Err: err}
	}
	// Advice only: a failure changes nothing the file holds.
	_ = unix.Fadvise(int(f.Fd()), off, n, unix.FADV_DONTNEED)
	return nil
}

// dropCache drops f's clean pages from the page cache (advice only).
func dropCache(f *os.File) { _ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED) }
