package testutil

import (
	"os/exec"
	"syscall"
)

// setProcAttr makes the kernel kill the server if the test process dies
// without cleaning up (a panic or a -timeout), so no server outlives its test.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
