package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/inventory"
	"github.com/steward-oam/steward/internal/provider"
	"github.com/steward-oam/steward/internal/steprun"
	"github.com/steward-oam/steward/internal/tracker"
	"github.com/steward-oam/steward/internal/workflow"
)

// runSteps runs, after keepState and health, the custom steps the run
// reached (steps whose type is a WorkflowStepDefinition): each template
// is evaluated within the evaluation budget and its provider actions are
// carried out as the Application (its ServiceAccount, when it has one).
// What a step's kube actions apply is recorded in the version's tracker
// first; keepState applies it in the next pass, which runs the step again
// and reads the object back, and from then on it is kept and
// garbage-collected like any other object of the version. finishWorkflow
// records how each step ended (workflow.Run.Settle).
func (r *ApplicationReconciler) runSteps(ctx context.Context, s *scope) error {
	custom := s.flow.Custom()
	if len(custom) == 0 {
		return nil
	}
	log := ctrl.LoggerFrom(ctx)
	names := make([]string, 0, len(custom))
	for name := range custom {
		names = append(names, name)
	}
	slices.Sort(names)
	defs, err := r.resolver().Steps(ctx, s.app)
	for _, name := range names {
		step, _ := s.flow.Step(name)
		ss, _ := s.flow.StepStatus(name)
		started := ss.FirstExecuteTime.Time
		wait := func(msg string) {
			s.flow.Settle(name, workflow.Verdict{Phase: v1beta1.WorkflowStepRunning, Reason: steprun.ReasonAction, Message: msg, Retry: steprun.Backoff(time.Since(started))})
		}
		def := defs[step.Type]
		switch {
		case err != nil:
			wait(err.Error())
			continue
		case def == nil:
			wait(fmt.Sprintf("waiting for WorkflowStepDefinition %q, in namespace %q or %q", step.Type, s.app.Namespace, r.Options.SystemDefinitionNS))
			continue
		case def.Spec.Schematic == nil || def.Spec.Schematic.CUE == nil:
			s.flow.Settle(name, workflow.Verdict{Phase: v1beta1.WorkflowStepFailed, Reason: steprun.ReasonUnsupported,
				Message: fmt.Sprintf("WorkflowStepDefinition %s/%s has no CUE template", def.Namespace, def.Name)})
			continue
		case s.identityErr != nil:
			wait(s.identityErr.Error())
			continue
		case s.rulesErr != nil:
			// Without valid policies nothing is touched, by steps either.
			wait("waiting until the policies are fixed: " + s.rulesErr.Error())
			continue
		}
		local, cerr := s.clients.GetClient(ctx, v1beta1.ClusterLocal)
		if cerr != nil {
			wait(cerr.Error())
			continue
		}
		params, perr := step.CustomParams(s.flow.Values())
		if perr != nil {
			s.flow.Settle(name, workflow.Verdict{Phase: v1beta1.WorkflowStepFailed, Reason: steprun.ReasonTemplate, Message: perr.Error()})
			continue
		}
		env := &provider.Env{Namespace: s.app.Namespace, App: s.app.Name, Step: name, Client: local,
			Boundary: r.boundary(s), Managed: r.managedBy(s), MaxResultBytes: r.Options.MaxStepActionResult.Value(),
			Log: log.WithValues("step", name)}
		runner := steprun.Runner{Renderer: r.Renderer, Providers: r.stepProviders().With(r.kubeActions(s, name)),
			Background: r.StepJobs, MaxRunBytes: r.Options.MaxStepResult.Value()}
		out := runner.Run(ctx, env, steprun.Step{
			Name: name, Type: step.Type, Definition: &def.ObjectMeta, Template: def.Spec.Schematic.CUE.Template,
			Params: params, Context: stepContext(s, name, ss.ID), Outputs: step.Outputs, Resumed: custom[name], Started: started,
			Run: steprun.RunID{App: client.ObjectKeyFromObject(s.app), Run: string(s.app.UID) + "/" + runKey(s.flow.Status) + "/" + name},
		})
		log.V(decisionLevel).Info("Ran workflow step", "step", name, "type", step.Type, "phase", out.Phase, "reason", out.Reason, "message", out.Message, "actions", out.Actions)
		if out.Phase == v1beta1.WorkflowStepSucceeded && len(out.Values) > 0 {
			s.flow.Export(out.Values)
			raw, _ := json.Marshal(runOutputs{Run: runKey(s.flow.Status), Values: s.flow.Values()})
			if err := r.Trackers.Annotate(ctx, s.current, annotationWorkflowOutputs, string(raw)); err != nil {
				wait("recording its outputs: " + err.Error())
				continue
			}
		}
		if out.Phase == v1beta1.WorkflowStepFailed {
			r.Recorder.Eventf(s.app, nil, "Warning", "WorkflowStepFailed", "RunStep", "step %q (%s): %s", name, step.Type, out.Message)
		}
		s.flow.Settle(name, out.Verdict)
		if out.Reason == steprun.ReasonApplying {
			// It recorded objects: the next pass applies them and runs
			// the step again.
			s.stepRecorded = true
		}
	}
	return nil
}

// stepContext is KubeVela's step context.
func stepContext(s *scope, step, sessionID string) map[string]any {
	rev := ""
	if s.current != nil {
		rev = liveRevision(s.app, s.current).Name
	}
	return map[string]any{
		"name":           s.app.Name,
		"namespace":      s.app.Namespace,
		"appName":        s.app.Name,
		"appRevision":    rev,
		"workflowName":   s.app.Name,
		"publishVersion": s.app.Annotations[v1beta1.AnnotationPublishVersion],
		"stepName":       step,
		"stepSessionID":  sessionID,
		"spanID":         sessionID,
		"appLabels":      nonNil(s.app.Labels),
		"appAnnotations": nonNil(s.app.Annotations),
	}
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// managedBy names what of this Application manages an object a step
// action would delete or overwrite ("this Application": its trackers
// record it); another Application's ownership labels are looked at by
// the action itself.
func (r *ApplicationReconciler) managedBy(s *scope) func(*unstructured.Unstructured) string {
	return func(obj *unstructured.Unstructured) string {
		if r.tracked(s, v1beta1.ClusterLocal, obj) {
			return "this Application"
		}
		return ""
	}
}

// stepProviders are the provider actions custom steps may use besides
// vela/kube's.
func (r *ApplicationReconciler) stepProviders() provider.Registry {
	if r.StepProviders == nil {
		return provider.Registry{}
	}
	return r.StepProviders
}

// missingStepDefinitions refuses a version whose workflow names a custom
// step type with no WorkflowStepDefinition, in the Application's
// namespace or the system namespace: nothing of it is recorded, as for
// an unknown component type.
func (r *ApplicationReconciler) missingStepDefinitions(ctx context.Context, app *v1beta1.Application) error {
	types := workflow.CustomTypes(workflow.Of(app))
	if len(types) == 0 {
		return nil
	}
	defs, err := r.resolver().Steps(ctx, app)
	if err != nil {
		return &reasonError{reason: v1beta1.ReasonDefinitionNotFound, err: err}
	}
	wf := workflow.Of(app)
	names := workflow.Namer{}
	var missing error
	visit := func(s v1beta1.WorkflowStepBase) {
		name := names.Name(s)
		if missing == nil && !workflow.Native(s.Type) && defs[s.Type] == nil {
			missing = &reasonError{reason: v1beta1.ReasonDefinitionNotFound, err: &workflow.MissingDefinitionError{
				Step: name, Type: s.Type, Namespaces: []string{app.Namespace, r.Options.SystemDefinitionNS}}}
		}
	}
	for _, s := range wf.Steps {
		visit(s.WorkflowStepBase)
		for _, sub := range s.SubSteps {
			visit(sub)
		}
	}
	return missing
}

// carryStepEntries adds to a new render of a version the entries its
// custom steps recorded (by the flow the version records), which no
// render produces: recording the render alone would mark them deleted.
func carryStepEntries(rt *v1beta1.ResourceTracker, versioned []v1beta1.ManagedResource) ([]v1beta1.ManagedResource, error) {
	raw := rt.Annotations[annotationWorkflowSteps]
	if raw == "" {
		return versioned, nil
	}
	flow, err := workflow.Decode(raw)
	if err != nil {
		return nil, err
	}
	custom := map[string]bool{}
	for st := range flow.All() {
		if st.Custom {
			custom[st.Name] = true
		}
	}
	if len(custom) == 0 {
		return versioned, nil
	}
	recorded, err := tracker.Entries(rt)
	if err != nil {
		return nil, err
	}
	have := inventory.Wanted(versioned)
	for _, e := range recorded {
		if custom[e.Step] && !e.Deleted && e.Data != nil && !have.Has(tracker.KeyOf(e)) {
			versioned = append(versioned, e)
		}
	}
	return versioned, nil
}
