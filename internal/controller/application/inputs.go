package application

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/placement"
	"github.com/steward-oam/steward/internal/tracker"
	"github.com/steward-oam/steward/internal/workflow"
)

// Values passed between workflow steps (inputs and outputs). A step's
// outputs are read from its live objects once it has succeeded and are
// recorded on the version's tracker (tracker.AnnotationWorkflowOutputs) with the
// run they belong to, so that a restarted run starts without them. A step
// taking inputs is rendered only once every value it takes was exported:
// the version is rendered again into its own tracker, recording the
// step's objects (tracker.AnnotationWorkflowInputs says with which values) before
// the step starts and they are applied.

// renderedInputs is tracker.AnnotationWorkflowInputs: a digest of the spec the
// version was rendered from and, for each step taking inputs that was
// rendered, a digest of its values (workflow.RenderedWith).
type renderedInputs struct {
	Spec  string            `json:"spec"`
	Steps map[string]string `json:"steps,omitempty"`
}

// runOutputs is tracker.AnnotationWorkflowOutputs: the values a run's steps
// exported, and the run (runKey).
type runOutputs struct {
	Run    string                     `json:"run"`
	Values map[string]json.RawMessage `json:"values"`
}

// runKey names one run of a version: its revision and start.
func runKey(st *v1beta1.WorkflowStatus) string {
	return st.AppRevision + "@" + st.StartTime.UTC().Format(time.RFC3339)
}

// runValues returns what the steps of the Application's current run of
// rt's version exported; nil when rt records another run's.
func runValues(app *v1beta1.Application, rt *v1beta1.ResourceTracker) map[string]json.RawMessage {
	st := app.Status.Workflow
	if st == nil || st.AppRevision != liveRevision(app, rt).Name {
		return nil
	}
	var out runOutputs
	if !tracker.DecodeMark(rt, tracker.AnnotationWorkflowOutputs, &out) || out.Run != runKey(st) {
		return nil
	}
	return out.Values
}

// readRendered reads tracker.AnnotationWorkflowInputs; ok is false when the
// version's steps take no inputs.
func readRendered(rt *v1beta1.ResourceTracker) (renderedInputs, bool) {
	var ri renderedInputs
	if !tracker.DecodeMark(rt, tracker.AnnotationWorkflowInputs, &ri) {
		return renderedInputs{}, false
	}
	return ri, true
}

// withInputs returns the steps to render for a version of a workflow
// whose steps take inputs: those whose values were all exported by the
// current run of this version (only when the version being rendered is
// the one kept: a new version starts a new run), rendered with them;
// s.rendered records which. Steps waiting for values are left out.
func withInputs(s *scope, steps []placement.Step, kind tracker.Kind) ([]placement.Step, error) {
	s.rendered = nil
	wf := workflow.Of(s.app)
	if !workflow.Gated(wf) {
		return steps, nil
	}
	flow, err := workflow.Steps(wf)
	if err != nil || !flow.TakesInputs() {
		// A workflow that does not check is refused after rendering.
		return steps, nil
	}
	var values map[string]json.RawMessage
	if s.current != nil && s.current.Name == tracker.Name(s.app.Name, s.app.Namespace, kind) {
		values = runValues(s.app, s.current)
	}
	deliver, rendered, err := placement.WithInputs(steps, flow, values)
	if err != nil {
		return nil, err
	}
	s.rendered = &renderedInputs{Spec: workflow.SpecDigest(s.app), Steps: rendered}
	return deliver, nil
}

// renderedMark is the value of tracker.AnnotationWorkflowInputs for a version
// being recorded: empty when its steps take no inputs.
func renderedMark(s *scope) string {
	if s.rendered == nil {
		return ""
	}
	raw, _ := json.Marshal(s.rendered)
	return string(raw)
}

// inputsMoved reports whether a step of the kept version may now be
// rendered with values it was not rendered with: every value it takes was
// exported by the current run, which has not finished. The version is
// then rendered again (s.refill names those steps). A version whose spec
// changed since it was rendered (a spec edited under the same
// publishVersion) is not: its steps wait, with a message.
func inputsMoved(s *scope) bool {
	s.refill = nil
	ri, ok := readRendered(s.current)
	if st := s.app.Status.Workflow; !ok || st == nil || st.Finished || ri.Spec != workflow.SpecDigest(s.app) {
		return false
	}
	flow, err := workflow.Decode(tracker.Mark(s.current, tracker.AnnotationWorkflowSteps))
	if err != nil {
		return false
	}
	_, s.refill = renderedSteps(ri, flow, runValues(s.app, s.current))
	return len(s.refill) > 0
}

// renderedSteps sorts the steps taking inputs whose values were all
// exported (values): rendered with them as the version records (ri), or
// moved, to be rendered again with them.
func renderedSteps(ri renderedInputs, flow workflow.Flow, values map[string]json.RawMessage) (rendered, moved map[string]bool) {
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

// refilled returns the entries to record when the version kept is
// rendered again for the values some steps take (s.refill): the recorded
// entries of every other step, and the render's entries of those steps
// alone; s.rendered keeps what was recorded for the other steps.
func refilled(s *scope, versioned, root []v1beta1.ManagedResource) (v, r []v1beta1.ManagedResource, err error) {
	recorded, err := tracker.Entries(s.current)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range recorded {
		if !s.refill[e.Step] {
			v = append(v, e)
		}
	}
	for _, e := range versioned {
		if s.refill[e.Step] {
			v = append(v, e)
		}
	}
	for _, e := range root {
		if s.refill[e.Step] {
			r = append(r, e)
		}
	}
	ri, _ := readRendered(s.current)
	steps := map[string]string{}
	for name, digest := range ri.Steps {
		steps[name] = digest
	}
	if s.rendered != nil {
		for name := range s.refill {
			steps[name] = s.rendered.Steps[name]
		}
		s.rendered.Steps = steps
	}
	return v, r, nil
}

// runData is what advanceWorkflow gives the run: the values exported so
// far and the steps rendered with them.
func runData(s *scope, flow workflow.Flow) workflow.Data {
	ri, ok := readRendered(s.current)
	if !ok {
		// Custom steps take their inputs when they run.
		return workflow.Data{Values: runValues(s.app, s.current)}
	}
	d := workflow.Data{Values: runValues(s.app, s.current)}
	d.Rendered, _ = renderedSteps(ri, flow, d.Values)
	if ri.Spec != workflow.SpecDigest(s.app) {
		d.Blocked = fmt.Sprintf("waiting for its objects to be rendered with its inputs, which this version cannot be: the Application's spec changed since version %s was recorded (publish a new version)", liveRevision(s.app, s.current).Name)
	}
	return d
}

// forgetOutputs drops, when a new run of the version starts, the values
// an earlier run exported: the new run's steps export their own.
func (r *Reconciler) forgetOutputs(ctx context.Context, s *scope) error {
	if !s.flow.Started || tracker.Mark(s.current, tracker.AnnotationWorkflowOutputs) == "" {
		return nil
	}
	return r.Trackers.Annotate(ctx, s.current, tracker.AnnotationWorkflowOutputs, "")
}

// exportOutputs reads, once a step exporting values has succeeded, its
// live objects and evaluates its outputs over them: output is its
// workload (apply-component) or its object (apply-object), outputs.<name>
// an apply-component step's other objects by their template name. The
// values are recorded on the version's tracker before the step is said to
// have succeeded. A value that does not evaluate yet (a status field not
// reported) keeps the step running, with the reason.
func (r *Reconciler) exportOutputs(ctx context.Context, s *scope, entries []v1beta1.ManagedResource, step workflow.Step) error {
	if len(step.Outputs) == 0 {
		return nil
	}
	have := s.flow.Values()
	missing := false
	for _, o := range step.Outputs {
		_, ok := have[o.Name]
		missing = missing || !ok
	}
	if !missing {
		return nil
	}
	scope := map[string]any{}
	outputs := map[string]any{}
	for _, e := range entries {
		if e.Step != step.Name {
			continue
		}
		c, err := s.clients.GetClient(ctx, e.Cluster)
		if err != nil {
			return err
		}
		live, err := getLive(ctx, c, e)
		if err != nil {
			return fmt.Errorf("reading %s: %w", tracker.KeyOf(e), err)
		}
		// The workload carries no resource name; the component's other
		// objects (its template's outputs, its traits') do, as recorded.
		name := ""
		if manifest, err := tracker.Manifest(e); err == nil {
			name = manifest.GetLabels()[v1beta1.LabelTraitResource]
		}
		if step.Type == v1beta1.WorkflowStepTypeApplyObject || name == "" {
			scope["output"] = live.Object
			continue
		}
		outputs[name] = live.Object
	}
	scope["outputs"] = outputs
	values, err := step.Export(r.Renderer.Evaluator(), scope)
	if err != nil {
		return err
	}
	s.flow.Export(values)
	raw, _ := json.Marshal(runOutputs{Run: runKey(s.flow.Status), Values: s.flow.Values()})
	if err := r.Trackers.Annotate(ctx, s.current, tracker.AnnotationWorkflowOutputs, string(raw)); err != nil {
		return err
	}
	names := make([]string, 0, len(values))
	for k := range values {
		names = append(names, k)
	}
	ctrl.LoggerFrom(ctx).V(decisionLevel).Info("Workflow step exported its outputs", "step", step.Name, "outputs", names)
	return nil
}
