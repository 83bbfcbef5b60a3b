package harness

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// Quantiles are nearest-rank, and a change never repaired ranks above
// every repair, so that unrepaired changes cannot flatter p99.
func TestFleetDrift_Quantiles(t *testing.T) {
	var d FleetDrift
	for i := 1; i <= 100; i++ {
		d.Repairs = append(d.Repairs, float64(i)/100)
	}
	p50, p95, p99, hi := d.Quantiles()
	if p50 != 0.50 || p95 != 0.95 || p99 != 0.99 || hi != 1.00 {
		t.Errorf("p50 %v p95 %v p99 %v max %v: want 0.50 0.95 0.99 1.00", p50, p95, p99, hi)
	}
	d.Repairs, d.Unrepaired = d.Repairs[:98], 2
	if _, _, p99, _ := d.Quantiles(); p99 != 0.98 {
		t.Errorf("p99 with two unrepaired of 100 = %v: want the largest repair, 0.98", p99)
	}
}

func object(uid, rv string, fields map[string]any) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: fields}
	o.SetUID(types.UID(uid))
	o.SetResourceVersion(rv)
	return o
}

// An edit is repaired by a later write that puts the field back, not by
// the edit's own event nor by an event older than it, even when the
// events arrive before the edit's resourceVersion is known.
func TestDriftCase_EditRepairedByALaterWriteOfTheManifestValue(t *testing.T) {
	now := time.Now()
	c := &driftCase{edit: true, want: int64(1), field: []string{"spec", "replicas"}, done: make(chan struct{})}
	c.offer(object("u", "10", map[string]any{"spec": map[string]any{"replicas": int64(1)}}), now) // before the edit
	c.offer(object("u", "11", map[string]any{"spec": map[string]any{"replicas": int64(7)}}), now) // the edit
	c.arm(11, now)
	select {
	case <-c.done:
		t.Fatal("repaired by an event from before the edit")
	default:
	}
	c.offer(object("u", "12", map[string]any{"spec": map[string]any{"replicas": int64(7)}}), now)
	select {
	case <-c.done:
		t.Fatal("repaired by a write that left the edit")
	default:
	}
	c.offer(object("u", "13", map[string]any{"spec": map[string]any{"replicas": int64(1)}}), now.Add(time.Second))
	select {
	case <-c.done:
	default:
		t.Fatal("not repaired by the write that put spec.replicas back")
	}
	if !c.at.Equal(now.Add(time.Second)) {
		t.Errorf("repaired at %v: want the repairing event's arrival", c.at)
	}
}

// A delete is repaired by an object of the same name and a new UID.
func TestDriftCase_DeleteRepairedByANewObject(t *testing.T) {
	c := &driftCase{oldUID: "old", done: make(chan struct{})}
	c.offer(object("old", "20", map[string]any{}), time.Now())
	select {
	case <-c.done:
		t.Fatal("repaired by the deleted object")
	default:
	}
	c.offer(object("new", "21", map[string]any{}), time.Now())
	select {
	case <-c.done:
	default:
		t.Fatal("not repaired by the re-created object")
	}
}

// The budget is held against Steward's figures in each mode, at the size
// it is written for, and a figure more than the tolerance over it is
// announced at the top of the report.
func TestBudget_OverByMoreThanTheToleranceIsAnnounced(t *testing.T) {
	var soak Budget
	for _, b := range Budgets {
		if b.Mode == "watch" && b.Source == sourceSoak {
			soak = b
		}
	}
	res := &Results{Controllers: []Controller{{Name: "steward", Command: "steward controller"}, {Name: "steward-watch", Command: "steward controller " + WatchModeFlag}}}
	res.Soak = []SoakResult{{Controller: "steward-watch", Apps: 100, CPUCost: CPUCost{Reconciles: 1000, CPUPerReconcileMs: soak.Value * 1.1}}}
	if over := OverBudget(res); len(over) != 0 {
		t.Fatalf("10%% over budget announced: %v", over)
	}
	if s := budgetSection(res); !strings.Contains(s, "| steward-watch | watch | CPU per re-sync reconcile | "+sourceSoak+" |") || strings.Contains(s, "OVER BUDGET") {
		t.Errorf("budget section:\n%s", s)
	}
	res.Soak[0].CPUPerReconcileMs = soak.Value * 1.3
	over := OverBudget(res)
	if len(over) != 1 || !strings.Contains(over[0], "steward-watch (watch mode): CPU per re-sync reconcile") {
		t.Fatalf("30%% over budget: %v", over)
	}
	if s := renderReport(res, "img", "latest.json", nil); !strings.Contains(s, "**OVER BUDGET** by more than 20%") {
		t.Errorf("report does not announce the figure over budget:\n%s", budgetSection(res))
	}
	// A soak of another size is not held against the budget.
	res.Soak[0].Apps = 30
	if checks := CheckBudgets(res); len(checks) != 0 {
		t.Errorf("a 30-app soak held against the 100-app budget: %v", checks)
	}
}

// The scale section shows CPU and drift repair when the run measured them.
func TestScale_ReportsCPUAndDrift(t *testing.T) {
	res := &Results{Profile: FullProfile(), Scale: []ScaleResult{{Controller: "steward-watch", Apps: 10000, Resources: 80000,
		ConvergeCPU: CPUCost{CPUSeconds: 300}, Steady: SteadyWindow{Window: Duration(5 * time.Minute),
			CPUCost: CPUCost{CPUSeconds: 9, Reconciles: 10000, CPUPerReconcileMs: 0.9}, Cores: 0.03},
		PassCPU: CPUCost{CPUSeconds: 200}, Drift: FleetDrift{Edits: 1, Deletes: 1, Repairs: []float64{0.1, 0.3}}}}}
	s := scaleSection(res)
	want := "| steward-watch | 300.0 s | 10000 (10000) | 0.90 ms | 0.0300 | 200.0 s | 2 (1, 1) | 100 ms | 300 ms | 300 ms | 300 ms | 0 |"
	if !strings.Contains(s, want) {
		t.Errorf("scale section lacks\n%s\nin\n%s", want, s)
	}
}
