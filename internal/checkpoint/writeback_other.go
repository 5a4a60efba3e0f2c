//go:build !linux

package checkpoint

import "os"

// startWriteback has no asynchronous form here; finishWriteback syncs.
func startWriteback(*os.File, int64, int64) error { return nil }

// finishWriteback syncs the file: the chunks written so far go to disk.
func finishWriteback(f *os.File, _, _ int64) error { return f.Sync() }

// dropCache has nothing to do here.
func dropCache(*os.File) {}
