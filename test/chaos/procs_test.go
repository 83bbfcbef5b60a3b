package chaos

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// controllerProc runs `steward controller` as a child process, restarts
// it when it exits on its own (counted, not a violation), and kills it
// with SIGKILL on demand.
type controllerProc struct {
	bin        string
	kubeconfig string
	logDir     string
	args       []string

	mu         sync.Mutex
	cmd        *exec.Cmd
	exited     chan struct{}
	killing    bool
	stopped    bool
	starts     int
	kills      int
	unexpected []string
}

func (p *controllerProc) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.startLocked()
}

func (p *controllerProc) startLocked() error {
	p.starts++
	logPath := filepath.Join(p.logDir, fmt.Sprintf("steward-%02d.log", p.starts))
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	cmd := exec.Command(p.bin, append([]string{"controller"}, p.args...)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+p.kubeconfig)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return fmt.Errorf("starting %s: %w", p.bin, err)
	}
	exited := make(chan struct{})
	p.cmd, p.exited, p.killing = cmd, exited, false
	go func() {
		err := cmd.Wait()
		_ = logFile.Close()
		close(exited)
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.killing || p.stopped || p.cmd != cmd {
			return
		}
		// Exited on its own: note it and start it again, as a Deployment
		// would.
		p.unexpected = append(p.unexpected, fmt.Sprintf("%s: %v", logPath, err))
		time.Sleep(500 * time.Millisecond)
		if !p.stopped {
			_ = p.startLocked()
		}
	}()
	return nil
}

// kill sends SIGKILL and waits for the process to go.
func (p *controllerProc) kill() {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.killing = true
	p.kills++
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-exited
}

// stop kills the process for good.
func (p *controllerProc) stop() {
	p.mu.Lock()
	p.stopped = true
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd != nil {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-exited
	}
}

func (p *controllerProc) stats() (starts, kills int, unexpected []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.starts, p.kills, append([]string(nil), p.unexpected...)
}
