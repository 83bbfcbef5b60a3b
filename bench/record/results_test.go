package record

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestResults_RoundTripThroughJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json")
	want := fixtureResults()
	if err := want.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Fleet[0].Converged != want.Fleet[0].Converged || got.Profile.Steady.Interval != want.Profile.Steady.Interval ||
		len(got.Steady[0].Requests) != 2 || got.Memory[1].Growth() != want.Memory[1].Growth() {
		t.Errorf("round trip changed the results: %+v", got)
	}
}

func TestManagedResult_PerObjectIsHeapBeyondTheEmptyController(t *testing.T) {
	m := ManagedResult{Points: []ManagedPoint{{Objects: 0, HeapInuse: 10000}, {Objects: 1000, HeapInuse: 1_510_000}, {Objects: 2000, HeapInuse: 2_010_000}}}
	if got := m.PerObject(m.Points[1]); got != 1500 {
		t.Errorf("PerObject(1000) = %v, want 1500", got)
	}
	if got := m.PerObject(m.Points[2]); got != 1000 {
		t.Errorf("PerObject(2000) = %v, want 1000", got)
	}
	if got, ok := m.Slope(); !ok || got != 500 {
		t.Errorf("Slope = %v %v, want 500", got, ok)
	}
	if got, ok := m.Incremental(2); !ok || got != 500 {
		t.Errorf("Incremental(2) = %v %v, want 500", got, ok)
	}
	if _, ok := m.Incremental(0); ok {
		t.Errorf("the baseline has an increment")
	}
	noBase := ManagedResult{Points: m.Points[1:]}
	if _, ok := noBase.Base(); ok || noBase.PerObject(noBase.Points[0]) != 0 {
		t.Errorf("a result without a baseline has a per-object heap")
	}
}

// Results recorded before the harness measured CPU (kept by --merge, or
// soak-before.json) are written as they were: without the CPU fields.
func TestResults_WithoutCPUAreWrittenWithoutTheCPUFields(t *testing.T) {
	// Old JSON has none of the fields; new JSON omits them when zero.
	path := filepath.Join(t.TempDir(), "r.json")
	if err := fixtureResults().WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{`"cpuSeconds"`, `"childRSSBytes"`, `"renderMeanSeconds"`} {
		if bytes.Contains(data, []byte(field)) {
			t.Errorf("results without CPU are written with %s", field)
		}
	}
	if err := withCPU().WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Fleet[0].CPUCost != withCPU().Fleet[0].CPUCost || got.Soak[0].Points[3].ChildRSSAnon != 12*mib || got.Soak[0].CPUPerReconcileMs != 5 {
		t.Errorf("round trip lost the CPU: %+v %+v", got.Fleet[0], got.Soak[0])
	}
}
