package record

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/application/facts"
	"github.com/steward-oam/steward/internal/controller/application/status"
	"github.com/steward-oam/steward/internal/placement"
	"github.com/steward-oam/steward/internal/tracker"
	"github.com/steward-oam/steward/internal/workflow"
)

// RunOutputs is tracker.AnnotationWorkflowOutputs: the values a run's steps
// exported, and the run (RunKey).
type RunOutputs struct {
	Run    string                     `json:"run"`
	Values map[string]json.RawMessage `json:"values"`
}

// RunKey names one run of a version: its revision and start.
func RunKey(st *v1beta1.WorkflowStatus) string {
	return st.AppRevision + "@" + st.StartTime.UTC().Format(time.RFC3339)
}

// RunValues returns what the steps of the Application's current run of
// rt's version exported; nil when rt records another run's.
func RunValues(app *v1beta1.Application, rt *v1beta1.ResourceTracker) map[string]json.RawMessage {
	st := app.Status.Workflow
	if st == nil || st.AppRevision != status.LiveRevision(app, rt).Name {
		return nil
	}
	var out RunOutputs
	if !tracker.DecodeMark(rt, tracker.AnnotationWorkflowOutputs, &out) || out.Run != RunKey(st) {
		return nil
	}
	return out.Values
}

// ReadRendered reads tracker.AnnotationWorkflowInputs; ok is false when the
// version's steps take no inputs.
func ReadRendered(rt *v1beta1.ResourceTracker) (facts.RenderedInputs, bool) {
	var ri facts.RenderedInputs
	if !tracker.DecodeMark(rt, tracker.AnnotationWorkflowInputs, &ri) {
		return facts.RenderedInputs{}, false
	}
	return ri, true
}

// WithInputs returns the steps to render for a version of a workflow
// whose steps take inputs: those whose values were all exported by the
// current run of this version (only when the version being rendered is
// the one kept: a new version starts a new run), rendered with them;
// s.Rendered records which. Steps waiting for values are left out.
func WithInputs(s *facts.Pass, steps []placement.Step, kind tracker.Kind) ([]placement.Step, error) {
	s.Rendered = nil
	wf := workflow.Of(s.App)
	if !workflow.Gated(wf) {
		return steps, nil
	}
	flow, err := workflow.Steps(wf)
	if err != nil || !flow.TakesInputs() {
		// A workflow that does not check is refused after rendering.
		return steps, nil
	}
	var values map[string]json.RawMessage
	if s.Current != nil && s.Current.Name == tracker.Name(s.App.Name, s.App.Namespace, kind) {
		values = RunValues(s.App, s.Current)
	}
	deliver, rendered, err := placement.WithInputs(steps, flow, values)
	if err != nil {
		return nil, err
	}
	s.Rendered = &facts.RenderedInputs{Spec: workflow.SpecDigest(s.App), Steps: rendered}
	return deliver, nil
}

// RenderedMark is the value of tracker.AnnotationWorkflowInputs for a version
// being recorded: empty when its steps take no inputs.
func RenderedMark(s *facts.Pass) string {
	if s.Rendered == nil {
		return ""
	}
	raw, _ := json.Marshal(s.Rendered)
	return string(raw)
}

// InputsMoved reports whether a step of the kept version may now be
// rendered with values it was not rendered with: every value it takes was
// exported by the current run, which has not finished. The version is
// then rendered again (s.Refill names those steps). A version whose spec
// changed since it was rendered (a spec edited under the same
// publishVersion) is not: its steps wait, with a message.
func InputsMoved(s *facts.Pass) bool {
	s.Refill = nil
	ri, ok := ReadRendered(s.Current)
	if st := s.App.Status.Workflow; !ok || st == nil || st.Finished || ri.Spec != workflow.SpecDigest(s.App) {
		return false
	}
	flow, err := workflow.Decode(tracker.Mark(s.Current, tracker.AnnotationWorkflowSteps))
	if err != nil {
		return false
	}
	_, s.Refill = RenderedSteps(ri, flow, RunValues(s.App, s.Current))
	return len(s.Refill) > 0
}

// RenderedSteps sorts the steps taking inputs whose values were all
// exported (values): rendered with them as the version records (ri), or
// moved, to be rendered again with them.
func RenderedSteps(ri facts.RenderedInputs, flow workflow.Flow, values map[string]json.RawMessage) (rendered, moved map[string]bool) {
	rendered, moved = map[string]bool{}, map[string]bool{}
	for st := range flow.All() {
		taken, ok := st.InputValues(values)
		if !ok || len(st.Inputs) == 0 || st.Custom {
			continue
		}
		if ri.Steps[st.Name] == workflow.RenderedWith(taken) {
			rendered[st.Name] = true
		} else {
			moved[st.Name] = true
		}
	}
	return rendered, moved
}

// Refilled returns the entries to record when the version kept is
// rendered again for the values some steps take (s.Refill): the recorded
// entries of every other step, and the render's entries of those steps
// alone; s.Rendered keeps what was recorded for the other steps.
func Refilled(s *facts.Pass, versioned, root []v1beta1.ManagedResource) (v, r []v1beta1.ManagedResource, err error) {
	recorded, err := tracker.Entries(s.Current)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range recorded {
		if !s.Refill[e.Step] {
			v = append(v, e)
		}
	}
	for _, e := range versioned {
		if s.Refill[e.Step] {
			v = append(v, e)
		}
	}
	for _, e := range root {
		if s.Refill[e.Step] {
			r = append(r, e)
		}
	}
	ri, _ := ReadRendered(s.Current)
	steps := map[string]string{}
	for name, digest := range ri.Steps {
		steps[name] = digest
	}
	if s.Rendered != nil {
		for name := range s.Refill {
			steps[name] = s.Rendered.Steps[name]
		}
		s.Rendered.Steps = steps
	}
	return v, r, nil
}

// RunData is what advanceWorkflow gives the run: the values exported so
// far and the steps rendered with them.
func RunData(s *facts.Pass, flow workflow.Flow) workflow.Data {
	ri, ok := ReadRendered(s.Current)
	if !ok {
		// Custom steps take their inputs when they run.
		return workflow.Data{Values: RunValues(s.App, s.Current)}
	}
	d := workflow.Data{Values: RunValues(s.App, s.Current)}
	d.Rendered, _ = RenderedSteps(ri, flow, d.Values)
	if ri.Spec != workflow.SpecDigest(s.App) {
		d.Blocked = fmt.Sprintf("waiting for its objects to be rendered with its inputs, which this version cannot be: the Application's spec changed since version %s was recorded (publish a new version)", status.LiveRevision(s.App, s.Current).Name)
	}
	return d
}
