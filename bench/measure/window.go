package measure

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/steward-oam/steward/bench/record"
)

// SteadyWindow measures p over window, in which nothing is to change; with
// pprof served, a CPU profile of the whole window is written to
// logDir/name and split into the controller's parts.
func SteadyWindow(ctx context.Context, p *Process, window time.Duration, logDir, name string) (record.SteadyWindow, error) {
	before, err := p.Usage(ctx)
	if err != nil {
		return record.SteadyWindow{}, err
	}
	res := record.SteadyWindow{Window: record.Duration(window)}
	profiled := make(chan error, 1)
	if p.PprofURL != "" {
		res.Profile = filepath.Join(logDir, name)
		go func() { profiled <- p.cpuProfile(ctx, window, res.Profile) }()
	} else {
		profiled <- nil
	}
	if err := sleep(ctx, window); err != nil {
		return res, err
	}
	after, err := p.Usage(ctx)
	if err != nil {
		return res, err
	}
	if err := <-profiled; err != nil {
		return res, err
	}
	res.CPUCost = after.CostSince(before)
	res.Cores = res.CPUCost.CoresOver(window)
	if res.Profile != "" {
		if res.Parts, err = summariseProfile(res.Profile); err != nil {
			return res, err
		}
	}
	return res, nil
}

// cpuProfile writes a CPU profile of the next d of p to path.
func (p *Process) cpuProfile(ctx context.Context, d time.Duration, path string) error {
	url := fmt.Sprintf("%sprofile?seconds=%d", p.PprofURL, int(d.Seconds()))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := (&http.Client{Timeout: d + time.Minute}).Do(req)
	if err != nil {
		return fmt.Errorf("controller %s: CPU profile: %w", p.Name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("controller %s: CPU profile: %s", p.Name, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("controller %s: CPU profile: %w", p.Name, err)
	}
	return f.Close()
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
