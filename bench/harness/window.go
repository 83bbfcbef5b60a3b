package harness

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// SteadyWindow is a controller's CPU over a window in which nothing
// changes: the apps re-sync at their period, nothing else happens.
type SteadyWindow struct {
	Window Duration `json:"window"`
	CPUCost
	// Cores is CPUSeconds over the window.
	Cores float64 `json:"cores"`
	// Profile is the path of the CPU profile taken over the window (in
	// the run's log directory); empty when the controller serves none.
	Profile string `json:"profile,omitempty"`
	// Parts splits the profile by the part of the controller that spent
	// it, largest first.
	Parts []ProfilePart `json:"profileParts,omitempty"`
}

// steadyWindow measures p over window; with pprof served, a CPU profile
// of the whole window is written to logDir/name.
func steadyWindow(ctx context.Context, p *Process, window time.Duration, logDir, name string) (SteadyWindow, error) {
	before, err := p.usage(ctx)
	if err != nil {
		return SteadyWindow{}, err
	}
	res := SteadyWindow{Window: Duration(window)}
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
	after, err := p.usage(ctx)
	if err != nil {
		return res, err
	}
	if err := <-profiled; err != nil {
		return res, err
	}
	res.CPUCost = after.costSince(before)
	res.Cores = res.CPUCost.coresOver(window)
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
