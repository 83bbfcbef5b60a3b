//go:build !linux

package sandbox

import "syscall"

// sysProcAttr starts an evaluator out of the terminal's process group.
// Without Linux's parent-death signal, an evaluator whose controller died
// ends when its stdin closes.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
