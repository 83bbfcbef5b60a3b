package sandbox

import "syscall"

// sysProcAttr starts an evaluator out of the terminal's process group, so
// that ^C reaches the controller, which stops its evaluators itself, and
// has the kernel kill it when the controller dies, whatever ends it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}
