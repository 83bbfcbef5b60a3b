package measure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/steward-oam/steward/bench/record"
)

// Process is a running controller under test.
type Process struct {
	Name       string
	MetricsURL string
	// PprofURL is the base of /debug/pprof/, empty when the controller
	// serves none.
	PprofURL   string
	cmd        *exec.Cmd
	done       chan struct{}
	waitErr    error
	logFile    *os.File
	httpClient *http.Client
	// started is when the process was started.
	started time.Time
}

// Started is when the process was started: the CPU figures of its
// process tree count from then.
func (p *Process) Started() time.Time { return p.started }

// StartController runs c against the cluster of kubeconfig (passed as
// KUBECONFIG), logging to logPath, and waits until its metrics endpoint
// answers.
func StartController(ctx context.Context, c record.Controller, kubeconfig, logPath string, qps float64, burst int) (*Process, error) {
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	pprofAddr := ""
	if c.ServesPprof() {
		if pprofAddr, err = freeLoopbackAddr(); err != nil {
			return nil, err
		}
	}
	args, err := c.Args(addr, pprofAddr, qps, burst)
	if err != nil {
		return nil, fmt.Errorf("controller %s: %w", c.Name, err)
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("creating controller log: %w", err)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting controller %s (%s): %w", c.Name, args[0], err)
	}
	p := &Process{Name: c.Name, MetricsURL: "http://" + addr + "/metrics", cmd: cmd, done: make(chan struct{}),
		logFile: logFile, httpClient: scrapeClient(), started: time.Now()}
	if pprofAddr != "" {
		p.PprofURL = "http://" + pprofAddr + "/debug/pprof/"
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	if err := p.waitForMetrics(ctx, time.Minute); err != nil {
		return nil, errors.Join(err, p.Stop())
	}
	return p, nil
}

func (p *Process) waitForMetrics(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if _, err := p.Metrics(ctx); err == nil {
			return nil
		} else if time.Now().After(deadline) {
			return fmt.Errorf("controller %s: metrics endpoint %s not up after %s (log: %s): %w", p.Name, p.MetricsURL, timeout, p.logFile.Name(), err)
		}
		select {
		case <-p.done:
			return fmt.Errorf("controller %s exited: %v (log: %s)", p.Name, p.waitErr, p.logFile.Name())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Metrics scrapes the controller's /metrics.
func (p *Process) Metrics(ctx context.Context) (Samples, error) {
	select {
	case <-p.done:
		return nil, fmt.Errorf("controller %s exited: %v (log: %s)", p.Name, p.waitErr, p.logFile.Name())
	default:
	}
	return scrape(ctx, p.httpClient, p.MetricsURL)
}

// Memory is a controller's memory at one moment.
type Memory struct {
	HeapInuse float64 `json:"heapInuseBytes"`
	RSS       float64 `json:"rssBytes"`
	// GCs is the number of garbage collections so far.
	GCs float64 `json:"gcs"`
}

// Memory reads go_memstats_heap_inuse_bytes,
// process_resident_memory_bytes and go_gc_duration_seconds_count; RSS
// falls back to /proc when the controller does not export process metrics.
func (p *Process) Memory(ctx context.Context) (Memory, error) {
	ss, err := p.Metrics(ctx)
	if err != nil {
		return Memory{}, err
	}
	m := Memory{HeapInuse: ss.Sum("go_memstats_heap_inuse_bytes", nil), RSS: ss.Sum("process_resident_memory_bytes", nil),
		GCs: ss.Sum("go_gc_duration_seconds_count", nil)}
	if !ss.Has("process_resident_memory_bytes") {
		m.RSS, err = rssFromProc(p.cmd.Process.Pid)
	}
	return m, err
}

// HeapAfterGC has the controller collect garbage and reads its heap:
// /debug/pprof/heap?gc=1 runs runtime.GC() before it writes the profile,
// and with debug=1 the profile ends with runtime.MemStats read after it.
// Between the two, the controller only writes the profile (and whatever
// its reconcilers do meanwhile), so the figure is the live heap plus at
// most a few milliseconds of allocation. RSS comes from /proc.
func (p *Process) HeapAfterGC(ctx context.Context) (record.HeapStats, error) {
	if p.PprofURL == "" {
		return record.HeapStats{}, fmt.Errorf("controller %s serves no pprof endpoints: add --pprof-addr=%s to its command line", p.Name, record.PlaceholderPprofAddr)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.PprofURL+"heap?gc=1&debug=1", nil)
	if err != nil {
		return record.HeapStats{}, err
	}
	resp, err := p.httpClient.Do(req)
	if err != nil {
		return record.HeapStats{}, fmt.Errorf("controller %s: heap profile: %w", p.Name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return record.HeapStats{}, fmt.Errorf("controller %s: heap profile: %s", p.Name, resp.Status)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return record.HeapStats{}, fmt.Errorf("controller %s: heap profile: %w", p.Name, err)
	}
	h, err := parseMemStats(string(body))
	if err != nil {
		return h, fmt.Errorf("controller %s: %w", p.Name, err)
	}
	h.RSS, err = rssFromProc(p.cmd.Process.Pid)
	return h, err
}

// parseMemStats reads the "# HeapInuse = N" lines that end a debug=1 heap
// profile.
func parseMemStats(profile string) (record.HeapStats, error) {
	var h record.HeapStats
	found := 0
	for _, line := range strings.Split(profile, "\n") {
		name, value, ok := strings.Cut(strings.TrimPrefix(line, "# "), " = ")
		if !ok {
			continue
		}
		var dst *float64
		switch name {
		case "HeapInuse":
			dst = &h.HeapInuse
		case "HeapAlloc":
			dst = &h.HeapAlloc
		default:
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return h, fmt.Errorf("heap profile: %s = %q: %w", name, value, err)
		}
		*dst = v
		found++
	}
	if found < 2 {
		return h, errors.New("heap profile: no runtime.MemStats (HeapInuse, HeapAlloc) at its end")
	}
	return h, nil
}

// rssFromProc reads VmRSS of a process from /proc (Linux).
func rssFromProc(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("reading RSS: %w", err)
	}
	rss, ok, err := statusBytes(string(data), "VmRSS")
	if err == nil && !ok {
		err = fmt.Errorf("no VmRSS for process %d", pid)
	}
	return rss, err
}

// Stop sends SIGTERM to the controller's process group, then SIGKILL after
// 15 seconds, and waits for it to exit.
func (p *Process) Stop() error {
	defer p.logFile.Close()
	select {
	case <-p.done:
		return nil
	default:
	}
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
	}
	return nil
}

func freeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// scrapeClient reads the controller's metrics and pprof endpoints. It asks
// for no gzip: promhttp keeps the gzip writer of a compressed response
// (about 0.8 MiB) in a pool that outlives the next collection, so every
// heap-after-GC reading taken after a scrape counted the benchmark's own
// scrape as the controller's heap.
func scrapeClient() *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableCompression: true, Proxy: http.ProxyFromEnvironment}}
}
