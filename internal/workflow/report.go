package workflow

import (
	"slices"

	"github.com/steward-oam/steward/api/v1beta1"
)

// What a pass's run tells the controller: which kind of run it is, what
// it reports in status.workflow, and which steps the pass runs.

// runKind is which of the three kinds of run a Run is; the zero value is
// a gated run.
type runKind int

const (
	kindGated runKind = iota
	kindOnePass
	kindRefused
)

// Gated reports whether r is a gated run: its steps decide which objects
// of the version a pass applies (Reached), and garbage collection waits
// for it to succeed. False for nil, a one-pass run and a refused run.
func (r *Run) Gated() bool {
	return r != nil && r.kind == kindGated
}

// Report is status.workflow after the pass, whatever the kind of run;
// nil when there is no run (no version recorded yet, nothing refused).
func (r *Run) Report() *v1beta1.WorkflowStatus {
	if r == nil {
		return nil
	}
	return r.Status
}

// Dispatching names the delivering steps this pass runs for the first
// time or again until they succeed, in the order reached: their objects
// are applied as a dispatch.
func (r *Run) Dispatching() []string {
	if r == nil {
		return nil
	}
	var out []string
	for _, name := range r.running {
		if r.delivers[name] {
			out = append(out, name)
		}
	}
	return out
}

// Waiting reports whether a step the pass ran is still waiting (for its
// components' health, or for another Application).
func (r *Run) Waiting() bool {
	return r != nil && r.waited
}

// Dispatches reports whether the pass runs a delivering step.
func (r *Run) Dispatches(step string) bool {
	return r != nil && step != "" && r.delivers[step] && slices.Contains(r.running, step)
}

// Step returns the recorded step of a name.
func (r *Run) Step(name string) (Step, bool) {
	var out Step
	found := false
	r.flow.each(func(s, _ *Step) {
		if s.Name == name {
			out, found = *s, true
		}
	})
	return out, found
}

// Succeeded reports whether the run finished without a failed step.
func (r *Run) Succeeded() bool {
	return r != nil && r.Status.Finished && r.Status.Phase == v1beta1.WorkflowPhaseSucceeded
}
