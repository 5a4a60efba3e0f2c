package compare

import (
	"os/exec"
	"syscall"
)

// setProcAttr puts a server in its own process group (a ^C in the terminal
// reaches compare, which stops it in order) and has the kernel send it
// SIGTERM if compare dies without stopping it.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
