//go:build linux

package certify

import (
	"syscall"
	"time"
)

// processCPU is the user and system CPU time of the whole process, all
// threads (the garbage collector's workers included), or 0 when unknown.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
