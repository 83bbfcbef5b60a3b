package scenario_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/steward-oam/steward/bench/record"
	"github.com/steward-oam/steward/bench/report"
	"github.com/steward-oam/steward/bench/scenario"
)

// TestRun_SmokeAllScenariosWithTinyCounts wires every scenario end to end
// against real Steward and baseline processes, at sizes that take a
// minute or two. It asserts shapes and counts, never timings. Set
// STEWARD_BENCH_SMOKE=1 (and KUBEBUILDER_ASSETS) to run it; `make test`
// does not.
func TestRun_SmokeAllScenariosWithTinyCounts(t *testing.T) {
	if os.Getenv("STEWARD_BENCH_SMOKE") == "" || testing.Short() {
		t.Skip("set STEWARD_BENCH_SMOKE=1 to run the scenarios against real controllers")
	}
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		t.Skip("KUBEBUILDER_ASSETS is not set")
	}
	bin := t.TempDir()
	for name, pkg := range map[string]string{"steward": "../../cmd/steward", "owns": "../baseline/owns"} {
		out, err := exec.Command("go", "build", "-o", filepath.Join(bin, name), pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("building %s: %v\n%s", name, err, out)
		}
	}
	common := " --metrics-addr={metrics-addr} --pprof-addr={pprof-addr} --health-addr=0 --kube-api-qps={qps} --kube-api-burst={burst}"
	second := 1 * time.Second
	opts := scenario.Options{
		Controllers: []record.Controller{
			{Name: "steward", Command: filepath.Join(bin, "steward") + " controller" + common},
			{Name: "steward-watch", Command: filepath.Join(bin, "steward") + " controller" + common + " " + record.WatchModeFlag},
			{Name: "owns", Command: filepath.Join(bin, "owns") + common},
		},
		BigAppVariants: []record.Controller{{Name: "steward-gzip", Command: filepath.Join(bin, "steward") + " controller" + common + " --resource-tracker-compression=gzip"}},
		Profile: record.Profile{
			Name: "smoke",
			Memory: record.MemoryConfig{Apps: 2, ResourcesPer: 4, Interval: record.Duration(10 * second), Unrelated: []int{0, 20}, Settle: record.Duration(second),
				Window: record.Duration(second), SampleEvery: record.Duration(100 * time.Millisecond), GCs: 1, MaxWindow: record.Duration(5 * second)},
			Steady: record.SteadyConfig{Apps: 2, ResourcesPer: 4, Interval: record.Duration(10 * second), Passes: 1},
			Drift:  record.DriftConfig{Deletes: 1, Edits: 1, ResourcesPer: 4, Interval: record.Duration(10 * second)},
			Fleet:  record.FleetConfig{Apps: 3, ResourcesPer: 8, Timeout: record.Duration(time.Minute)},
			BigApp: record.BigAppConfig{Resources: 12, Timeout: record.Duration(time.Minute)},
			Managed: record.ManagedConfig{ResourcesPer: 8, Levels: []int{16, 32}, Settle: record.Duration(second), Window: record.Duration(second), GCs: 1,
				Timeout: record.Duration(time.Minute)},
			Soak: record.SoakConfig{Apps: 2, Interval: record.Duration(10 * second), Duration: record.Duration(20 * second), SampleEvery: record.Duration(10 * second)},
		},
		BinDir: assets, CRDDir: "../../config/crd", DefinitionDirs: []string{"../../config/definitions", "../definitions"},
		QPS: 100, Burst: 200, LogDir: t.TempDir(), Progress: testWriter{t},
	}
	res, err := scenario.Run(context.Background(), opts)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(res.Errors) > 0 {
		t.Fatalf("scenarios failed: %v", res.Errors)
	}
	if len(res.Memory) != 3 || len(res.Memory[0].Points) != 2 || res.Memory[0].Points[1].HeapInuse <= 0 {
		t.Errorf("memory = %+v", res.Memory)
	}
	for _, s := range res.Steady {
		if s.Reconciles <= 0 || s.PerResource <= 0 || len(s.Requests) == 0 {
			t.Errorf("steady %s measured nothing: %+v", s.Controller, s)
		}
	}
	if len(res.Drift) != 3 || len(res.Drift[0].Repairs) != 1 || len(res.Drift[1].Edits) != 1 {
		t.Errorf("drift = %+v", res.Drift)
	}
	if len(res.Fleet) != 3 || res.Fleet[0].Work < 24 || res.Fleet[0].BusiestKind == "" {
		t.Errorf("fleet = %+v", res.Fleet)
	}
	for _, f := range res.Fleet {
		if !f.Measured() || f.Reconciles <= 0 || f.CPUPerReconcileMs <= 0 {
			t.Errorf("fleet %s measured no CPU per reconcile: %+v", f.Controller, f.CPUCost)
		}
	}
	if len(res.BigApp) != 4 || res.BigApp[0].Trackers == 0 || res.BigApp[2].Trackers != 0 || res.BigApp[3].Compression != "gzip" {
		t.Errorf("big app = %+v", res.BigApp)
	}
	if len(res.Managed) != 3 || len(res.Managed[1].Points) != 3 || res.Managed[1].Points[2].Objects != 32 || res.Managed[1].Points[2].Informers == 0 {
		t.Errorf("managed = %+v", res.Managed)
	}
	if len(res.Soak) != 3 || len(res.Soak[0].Points) != 3 || res.Soak[0].Points[2].HeapInuse <= 0 || res.Soak[0].Points[2].Reconciles <= 0 {
		t.Errorf("soak = %+v", res.Soak)
	}
	dir := t.TempDir()
	if err := report.Write(res, filepath.Join(dir, "benchmarks.md"), filepath.Join(dir, "img"), "smoke.json"); err != nil {
		t.Errorf("WriteReport: %v", err)
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}
