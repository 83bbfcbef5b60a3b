package application

import (
	"context"
	"encoding/json"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/application/decisionlog"
	"github.com/steward-oam/steward/internal/controller/application/facts"
	"github.com/steward-oam/steward/internal/controller/application/record"
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

// forgetOutputs drops, when a new run of the version starts, the values
// an earlier run exported: the new run's steps export their own.
func (r *Reconciler) forgetOutputs(ctx context.Context, s *facts.Pass) error {
	if !s.Flow.Started || tracker.Mark(s.Current, tracker.AnnotationWorkflowOutputs) == "" {
		return nil
	}
	return r.Trackers.Annotate(ctx, s.Current, tracker.AnnotationWorkflowOutputs, "")
}

// exportOutputs reads, once a step exporting values has succeeded, its
// live objects and evaluates its outputs over them: output is its
// workload (apply-component) or its object (apply-object), outputs.<name>
// an apply-component step's other objects by their template name. The
// values are recorded on the version's tracker before the step is said to
// have succeeded. A value that does not evaluate yet (a status field not
// reported) keeps the step running, with the reason.
func (r *Reconciler) exportOutputs(ctx context.Context, s *facts.Pass, entries []v1beta1.ManagedResource, step workflow.Step) error {
	if len(step.Outputs) == 0 {
		return nil
	}
	have := s.Flow.Values()
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
		c, err := s.Clients.GetClient(ctx, e.Cluster)
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
	s.Flow.Export(values)
	raw, _ := json.Marshal(record.RunOutputs{Run: record.RunKey(s.Flow.Status), Values: s.Flow.Values()})
	if err := r.Trackers.Annotate(ctx, s.Current, tracker.AnnotationWorkflowOutputs, string(raw)); err != nil {
		return err
	}
	names := make([]string, 0, len(values))
	for k := range values {
		names = append(names, k)
	}
	ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info("Workflow step exported its outputs", "step", step.Name, "outputs", names)
	return nil
}
