package scenario

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/steward-oam/steward/bench/measure"
	"github.com/steward-oam/steward/bench/record"
)

// benchNamespace holds the Applications of every scenario.
const benchNamespace = "bench"

// Run runs the selected scenarios for every controller, each on a fresh
// control plane, and returns what it measured. A scenario that fails is
// recorded in Results.Errors and the run goes on; only a cancelled ctx
// stops it early.
func Run(ctx context.Context, opts Options) (*record.Results, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opts.LogDir, 0o755); err != nil {
		return nil, fmt.Errorf("creating log dir: %w", err)
	}
	r := &runner{opts: opts, res: &record.Results{
		Profile: opts.Profile, Started: time.Now().UTC(), Host: hostInfo(),
		QPS: opts.QPS, Burst: opts.Burst, Controllers: opts.Controllers, Variants: opts.BigAppVariants,
	}}
	scenarios := map[string]func(context.Context, *session) error{
		record.ScenarioMemory:      r.memory,
		record.ScenarioSteady:      r.steady,
		record.ScenarioDrift:       r.drift,
		record.ScenarioFleet:       r.fleet,
		record.ScenarioBigApp:      r.bigApp,
		record.ScenarioManaged:     r.managed,
		record.ScenarioSoak:        r.soak,
		record.ScenarioScale:       r.scale,
		record.ScenarioShards:      r.shards,
		record.ScenarioHelm:        r.helm,
		record.ScenarioDefinitions: r.definitions,
	}
	for _, name := range append(slices.Clone(record.AllScenarios), record.OptInScenarios...) {
		if !opts.runs(name) {
			continue
		}
		controllers := opts.Controllers
		if name == record.ScenarioBigApp {
			controllers = append(slices.Clone(controllers), opts.BigAppVariants...)
		}
		for _, c := range controllers {
			start := time.Now()
			err := r.session(ctx, name, c, scenarios[name])
			if ctx.Err() != nil {
				return r.res, ctx.Err()
			}
			if err != nil {
				r.res.Errors = append(r.res.Errors, fmt.Sprintf("%s/%s: %v", name, c.Name, err))
				r.progress("%s/%s: FAILED: %v", name, c.Name, err)
				continue
			}
			r.progress("%s/%s: done in %s", name, c.Name, time.Since(start).Round(time.Second))
		}
	}
	r.res.Elapsed = record.Duration(time.Since(r.res.Started))
	return r.res, nil
}

type runner struct {
	opts Options
	res  *record.Results
}

// session is one scenario of one controller on its own control plane.
type session struct {
	scenario   string
	controller record.Controller
	cp         *measure.ControlPlane
	proc       *measure.Process
	runner     *runner
}

func (r *runner) session(ctx context.Context, scenario string, c record.Controller, fn func(context.Context, *session) error) (err error) {
	cp, err := measure.StartControlPlane(ctx, r.opts.BinDir, r.opts.CRDDir, r.opts.DefinitionDirs)
	if err != nil {
		return err
	}
	s := &session{scenario: scenario, controller: c, cp: cp, runner: r}
	defer func() {
		if s.proc != nil {
			if err == nil {
				s.recordCPU(ctx)
			}
			err = errors.Join(err, s.proc.Stop())
		}
		err = errors.Join(err, cp.Stop())
	}()
	return fn(ctx, s)
}

// recordCPU adds what the session's controller process has spent since
// it started to the results; a process that cannot be read is left out.
func (s *session) recordCPU(ctx context.Context) {
	u, err := s.proc.Usage(ctx)
	if err != nil {
		return
	}
	s.runner.res.CPU = append(s.runner.res.CPU, scenarioCPU(s.scenario, s.controller.Name, u.CostSince(measure.Usage{}), time.Since(s.proc.Started())))
}

// scenarioCPU is the CPU of a process that ran for lifetime.
func scenarioCPU(scenario, controller string, cost record.CPUCost, lifetime time.Duration) record.ScenarioCPU {
	return record.ScenarioCPU{Scenario: scenario, Controller: controller, CPUCost: cost, Seconds: lifetime.Seconds(), Cores: cost.CoresOver(lifetime)}
}

// start runs the controller under test on the session's control plane.
func (s *session) start(ctx context.Context) error {
	return s.startWith(ctx, s.runner.opts.QPS, s.runner.opts.Burst)
}

// startWith is start at a client QPS and burst of the scenario's own; a
// second start of a session appends to the same log.
func (s *session) startWith(ctx context.Context, qps float64, burst int) error {
	logPath := filepath.Join(s.runner.opts.LogDir, s.scenario+"-"+s.controller.Name+".log")
	p, err := measure.StartController(ctx, s.controller, s.cp.Kubeconfig, logPath, qps, burst)
	if err != nil {
		return err
	}
	s.proc = p
	return nil
}

// work returns the requests of the controller since base: the
// apiserver's counts less the harness's own, events and background aside.
func (s *session) work(ctx context.Context, base, ownBase record.RequestCounts) (all record.RequestCounts, err error) {
	now, err := s.cp.Requests(ctx)
	if err != nil {
		return nil, err
	}
	own := s.cp.Own.Snapshot().Sub(ownBase)
	return now.Sub(base).Sub(own), nil
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

func hostInfo() record.Host {
	h := record.Host{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
	if out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
		h.Commit = strings.TrimSpace(string(out))
	}
	return h
}
