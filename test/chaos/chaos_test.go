package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// harness is one chaos run: the cluster, the controller process, the
// model and the seeded source of every decision.
type harness struct {
	c       client.Client
	plane   *plane
	ctrl    *controllerProc
	rng     *rand.Rand
	world   *world
	foreign []foreignObj
	log     []string
}

// settings of a run, from the environment.
type settings struct {
	seed       uint64
	iterations int
	kills      int
	restarts   int
	keepGoing  bool
	quiet      time.Duration
	settle     time.Duration
	reSync     time.Duration
}

func settingsFromEnv(t *testing.T) settings {
	s := settings{
		seed:       uint64(time.Now().UnixNano()),
		iterations: 25,
		quiet:      90 * time.Second,
		settle:     25 * time.Second,
		reSync:     10 * time.Second,
	}
	envInt := func(name string, def int) int {
		v := os.Getenv(name)
		if v == "" {
			return def
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("%s=%q: want an integer", name, v)
		}
		return n
	}
	if v := os.Getenv("CHAOS_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("CHAOS_SEED=%q: want an unsigned integer", v)
		}
		s.seed = n
	} else {
		s.seed %= 1_000_000 // short enough to type
	}
	s.iterations = envInt("CHAOS_ITERATIONS", s.iterations)
	// About one kill per ten iterations (at least two), one API server
	// restart per hundred (at least one).
	s.kills = envInt("CHAOS_KILLS", max(2, s.iterations/10))
	s.restarts = envInt("CHAOS_API_RESTARTS", max(1, s.iterations/100))
	s.keepGoing = os.Getenv("CHAOS_KEEP_GOING") != ""
	return s
}

// TestChaos runs a seeded random sequence of Application changes while the
// controller is killed and restarted and the API server restarted, and
// checks the invariants of docs/chaos.md after every quiet period.
func TestChaos(t *testing.T) {
	cfg := settingsFromEnv(t)
	t.Logf("chaos: seed %d, %d iterations, %d controller kills, %d API server restarts (replay: CHAOS_SEED=%d CHAOS_ITERATIONS=%d make chaos)",
		cfg.seed, cfg.iterations, cfg.kills, cfg.restarts, cfg.seed, cfg.iterations)
	ctx := context.Background()

	dir, err := os.MkdirTemp("", "chaos-")
	if err != nil {
		t.Fatal(err)
	}
	p, c := startInstalledPlane(ctx, t, dir)
	h := &harness{c: c, plane: p, rng: rand.New(rand.NewPCG(cfg.seed, 0x5eed)), world: newWorld()}
	if err := h.createForeign(ctx); err != nil {
		t.Fatal(err)
	}
	hostileURL, stopHostile, err := hostileServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopHostile)
	h.ctrl = &controllerProc{bin: stewardBin, kubeconfig: p.kubeconfig, logDir: dir, args: []string{
		"--metrics-addr=0", "--health-addr=0", "--egress-allow=" + hostileAllow,
		"--application-re-sync-period=" + cfg.reSync.String(),
		"--application-revision-limit=" + strconv.Itoa(revisionLimit),
		"--zap-log-level=1",
	}}
	if mode := os.Getenv("CHAOS_DRIFT_DETECTION"); mode != "" {
		// CHAOS_DRIFT_DETECTION=timer runs the suite in timer mode; by
		// default it runs the controller's default, watch mode.
		h.ctrl.args = append(h.ctrl.args, "--drift-detection="+mode)
	}
	if err := h.ctrl.start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.ctrl.stop)
	apiServer := p.cfg.Host
	if !strings.Contains(apiServer, "://") {
		apiServer = "https://" + apiServer
	}
	if err := installHostile(ctx, c, apiServer, hostileURL); err != nil {
		t.Fatal(err)
	}

	// Faults are placed from the seed too.
	killAt := map[int]int{}
	for range cfg.kills {
		killAt[h.rng.IntN(cfg.iterations)]++
	}
	restartAt := map[int]bool{}
	for i := range cfg.restarts {
		// Spread over the run, never in the first iterations.
		lo := cfg.iterations * (i + 1) / (cfg.restarts + 2)
		restartAt[lo+h.rng.IntN(max(1, cfg.iterations/(cfg.restarts+2)))] = true
	}

	reported := map[string]bool{}
	var found []violation
	failed := false
	report := func(iter int, vs []violation) {
		failed = true
		found = append(found, vs...)
		var b strings.Builder
		fmt.Fprintf(&b, "CHAOS INVARIANT VIOLATION at iteration %d (seed %d)\n", iter, cfg.seed)
		for _, v := range vs {
			fmt.Fprintf(&b, "  %s\n", v)
			reported[v.key()] = true
		}
		shown := map[string]bool{}
		for _, v := range vs {
			if shown[v.App+"/"+v.Comp] {
				continue
			}
			shown[v.App+"/"+v.Comp] = true
			if rel := relevantSteps(h.log, v); len(rel) > 0 && len(rel) < len(h.log) {
				fmt.Fprintf(&b, "steps that touched %s:\n  %s\n", v.Subject, strings.Join(rel, "\n  "))
			}
		}
		fmt.Fprintf(&b, "steps so far:\n  %s\n", strings.Join(h.log, "\n  "))
		fmt.Fprintf(&b, "controller logs: %s/steward-*.log\n", dir)
		fmt.Fprintf(&b, "replay: CHAOS_SEED=%d CHAOS_ITERATIONS=%d make chaos (fails at iteration %d)", cfg.seed, cfg.iterations, iter)
		t.Error(b.String())
	}

	for iter := range cfg.iterations {
		steps := 1 + h.rng.IntN(2)
		for i := range steps {
			s, err := h.nextStep(ctx, i == 0)
			if err != nil {
				t.Fatalf("iteration %d: choosing a step: %v", iter, err)
			}
			h.log = append(h.log, fmt.Sprintf("%3d: %s", iter, s.desc))
			if err := s.do(ctx, h); err != nil {
				t.Fatalf("iteration %d: %s: %v", iter, s.desc, err)
			}
			if s.last {
				break
			}
		}
		for range killAt[iter] {
			// A random moment of the pass the change started.
			time.Sleep(time.Duration(h.rng.IntN(1500)) * time.Millisecond)
			h.ctrl.kill()
			h.log = append(h.log, fmt.Sprintf("%3d: SIGKILL the controller, restart it", iter))
			if err := h.ctrl.start(); err != nil {
				t.Fatal(err)
			}
		}
		if restartAt[iter] {
			time.Sleep(time.Duration(h.rng.IntN(1000)) * time.Millisecond)
			h.log = append(h.log, fmt.Sprintf("%3d: restart kube-apiserver", iter))
			if err := p.restartAPIServer(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		var vs []violation
		for _, v := range h.waitQuiet(ctx, cfg.quiet) {
			if !reported[v.key()] {
				vs = append(vs, v)
			}
		}
		vs = append(vs, h.checkInvariants(ctx, cfg.settle, reported)...)
		if len(vs) > 0 {
			report(iter, vs)
			if !cfg.keepGoing {
				break
			}
		}
	}
	// The hostile tenant's steps ran, and were refused.
	deadline := time.Now().Add(cfg.settle)
	for {
		vs := h.hostileInvariants(ctx, true)
		if len(vs) == 0 {
			break
		}
		if time.Now().After(deadline) {
			report(cfg.iterations, vs)
			break
		}
		time.Sleep(time.Second)
	}
	starts, kills, unexpected := h.ctrl.stats()
	summary := fmt.Sprintf("chaos summary: seed %d, %d iterations, %d steps, %d controller kills, %d controller starts, %d API server restarts, %d unexpected controller exits, %d violations",
		cfg.seed, cfg.iterations, len(h.log), kills, starts, p.restarts, len(unexpected), len(found))
	byKind := map[string]int{}
	for _, v := range found {
		byKind[v.Kind]++
	}
	if len(byKind) > 0 {
		summary += fmt.Sprintf(" %v", byKind)
	}
	if testing.Verbose() {
		t.Logf("steps:\n  %s", strings.Join(h.log, "\n  "))
	}
	t.Log(summary)
	for _, u := range unexpected {
		t.Logf("controller exited on its own: %s", u)
	}
	if !failed {
		_ = os.RemoveAll(dir)
	} else {
		t.Logf("kept %s for the controller logs", filepath.Clean(dir))
	}
}

// relevantSteps picks the steps of the log that can matter to v: those
// naming its component, the life cycle, versions and trackers of its
// Application, and the faults.
func relevantSteps(log []string, v violation) []string {
	if v.App == "" {
		return nil
	}
	var out []string
	for _, line := range log {
		_, desc, _ := strings.Cut(line, ": ")
		switch {
		case v.Comp != "" && strings.Contains(desc, v.Comp),
			strings.HasPrefix(desc, "create app "+v.App+" "), desc == "delete app "+v.App,
			strings.HasPrefix(desc, "app "+v.App+": publishVersion"), desc == "app "+v.App+": remove publishVersion",
			strings.HasPrefix(desc, "delete resource tracker "+v.App+"."),
			v.Comp == "" && strings.HasPrefix(desc, "app "+v.App+":"),
			strings.HasPrefix(desc, "SIGKILL"), strings.HasPrefix(desc, "restart kube-apiserver"):
			out = append(out, line)
		}
	}
	return out
}
