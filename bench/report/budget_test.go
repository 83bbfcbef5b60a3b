package report

import (
	"strings"
	"testing"

	"github.com/steward-oam/steward/bench/record"
)

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
	res := &record.Results{Controllers: []record.Controller{{Name: "steward", Command: "steward controller"}, {Name: "steward-watch", Command: "steward controller " + record.WatchModeFlag}}}
	res.Soak = []record.SoakResult{{Controller: "steward-watch", Apps: 100, CPUCost: record.CPUCost{Reconciles: 1000, CPUPerReconcileMs: soak.Value * 1.1}}}
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

// The soak's heap after GC at its last minute is held against its budget
// in each mode.
func TestBudget_SoakHeapAfterGC(t *testing.T) {
	res := &record.Results{Controllers: []record.Controller{{Name: "steward", Command: "steward controller"}, {Name: "steward-watch", Command: "steward controller " + record.WatchModeFlag}}}
	point := func(mib float64) record.SoakPoint { return record.SoakPoint{HeapInuse: mib * (1 << 20)} }
	res.Soak = []record.SoakResult{
		{Controller: "steward", Apps: 100, Points: []record.SoakPoint{point(30), point(19)}},
		{Controller: "steward-watch", Apps: 100, Points: []record.SoakPoint{point(19), point(25)}},
	}
	over := OverBudget(res)
	if len(over) != 1 || !strings.Contains(over[0], "steward-watch (watch mode): heap after GC 25.00 MiB") {
		t.Fatalf("over budget: %v; want the watch soak's last minute only", over)
	}
}
