/*
Copyright 2026 The Steward Authors.

Licensed under the Apache License, Version 2.0.
*/

package localcp

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	mathrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// process is one component of the plane that envtest does not run
// (kube-controller-manager, kube-scheduler, kwok): a binary from BinDir,
// its log in the state dir, and the /healthz URL that says it is up.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	healthz string
	exited  chan struct{} // closed when the process has exited
	waitErr error         // set before exited is closed
}

// startProcess starts bin with args, its output appended to logPath (and,
// when attach is set, copied to stdout and stderr). It does not wait for
// the process to be ready: see waitHealthy.
func startProcess(name, bin string, args []string, logPath, healthz string, attach bool) (*process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("creating log of %s: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = io.Writer(logFile), io.Writer(logFile)
	if attach {
		cmd.Stdout, cmd.Stderr = io.MultiWriter(logFile, os.Stdout), io.MultiWriter(logFile, os.Stderr)
	}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, healthz: healthz, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		_ = logFile.Close()
		close(p.exited)
	}()
	return p, nil
}

// waitHealthy polls the process's /healthz until it answers 200 OK, the
// process exits, or ctx is done. The components serve it over HTTPS with a
// self-signed certificate (kwok over plain HTTP): the plane only asks
// whether they are up, so the certificate is not checked.
func (p *process) waitHealthy(ctx context.Context) error {
	httpClient := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // loopback health probe
	}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.healthz, nil)
		if err != nil {
			return err
		}
		resp, err := httpClient.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-p.exited:
			return fmt.Errorf("%s exited before it was healthy (%v); last lines of %s:\n%s", p.name, p.waitErr, p.logPath, p.logTail(20))
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s to answer %s: %w; last lines of %s:\n%s", p.name, p.healthz, ctx.Err(), p.logPath, p.logTail(20))
		case <-tick.C:
		}
	}
}

// stop sends SIGTERM, then SIGKILL if the process has not exited within
// timeout, and waits for it to exit.
func (p *process) stop(timeout time.Duration) error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stopping %s: %w", p.name, err)
	}
	select {
	case <-p.exited:
		return nil
	case <-time.After(timeout):
	}
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("killing %s: %w", p.name, err)
	}
	<-p.exited
	return nil
}

// logTail returns the last n lines of the process's log.
func (p *process) logTail(n int) string {
	data, err := os.ReadFile(p.logPath)
	if err != nil {
		return fmt.Sprintf("(reading log: %v)", err)
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	return string(bytes.Join(lines[max(0, len(lines)-n):], []byte("\n")))
}

// Ports below Linux's ephemeral range (32768-60999) are never given to
// outgoing connections or to listeners on port 0, which on a busy machine
// take a port "free a moment ago" before it is bound; ports are picked here.
const (
	firstPort = 20000
	lastPort  = 32767
)

// FreeLoopbackAddr returns 127.0.0.1:PORT for the first port from preferred
// on (at most 100 further) that is free on loopback, below the ephemeral
// range so that no outgoing connection takes it before the caller binds it.
// preferred 0 starts at a random port, so planes started at the same time
// rarely try the same ports.
func FreeLoopbackAddr(preferred int) (string, error) {
	if preferred <= 0 {
		preferred = firstPort + mathrand.IntN(lastPort-firstPort-100)
	}
	for port := preferred; port < preferred+100; port++ {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		l, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		if err := l.Close(); err != nil {
			return "", err
		}
		return addr, nil
	}
	return "", fmt.Errorf("no free loopback port in %d-%d", preferred, preferred+99)
}

// freePort is a random free port, as FreeLoopbackAddr(0) picks it.
func freePort() (int, error) {
	addr, err := FreeLoopbackAddr(0)
	if err != nil {
		return 0, err
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(port)
}

// logPath is where the plane keeps the log of component name.
func logPath(stateDir, name string) string {
	return filepath.Join(stateDir, name+".log")
}
