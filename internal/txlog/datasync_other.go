//go:build !linux

package txlog

import "os"

// datasync is fsync where fdatasync is not available.
func datasync(f *os.File) error { return f.Sync() }
