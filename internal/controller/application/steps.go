package application

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/application/decisionlog"
	"github.com/steward-oam/steward/internal/controller/application/facts"
	"github.com/steward-oam/steward/internal/controller/application/record"
	"github.com/steward-oam/steward/internal/controller/application/status"
	"github.com/steward-oam/steward/internal/delivery"
	"github.com/steward-oam/steward/internal/provider"
	"github.com/steward-oam/steward/internal/steprun"
	"github.com/steward-oam/steward/internal/tracker"
	"github.com/steward-oam/steward/internal/workflow"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
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
func (r *Reconciler) runSteps(ctx context.Context, s *facts.Pass) error {
	custom := s.Flow.Custom()
	if len(custom) == 0 {
		return nil
	}
	log := ctrl.LoggerFrom(ctx)
	names := make([]string, 0, len(custom))
	for name := range custom {
		names = append(names, name)
	}
	slices.Sort(names)
	defs, err := r.resolver().Steps(ctx, s.App)
	for _, name := range names {
		step, _ := s.Flow.Step(name)
		ss, _ := s.Flow.StepStatus(name)
		started := ss.FirstExecuteTime.Time
		wait := func(msg string) {
			s.Flow.Settle(name, workflow.Verdict{Phase: v1beta1.WorkflowStepRunning, Reason: steprun.ReasonAction, Message: msg, Retry: steprun.Backoff(time.Since(started))})
		}
		def := defs[step.Type]
		switch {
		case err != nil:
			wait(err.Error())
			continue
		case def == nil:
			wait(fmt.Sprintf("waiting for WorkflowStepDefinition %q, in namespace %q or %q", step.Type, s.App.Namespace, r.Options.SystemDefinitionNS))
			continue
		case def.Spec.Schematic == nil || def.Spec.Schematic.CUE == nil:
			s.Flow.Settle(name, workflow.Verdict{Phase: v1beta1.WorkflowStepFailed, Reason: steprun.ReasonUnsupported,
				Message: fmt.Sprintf("WorkflowStepDefinition %s/%s has no CUE template", def.Namespace, def.Name)})
			continue
		case s.IdentityErr != nil:
			wait(s.IdentityErr.Error())
			continue
		case s.RulesErr != nil:
			// Without valid policies nothing is touched, by steps either.
			wait("waiting until the policies are fixed: " + s.RulesErr.Error())
			continue
		}
		local, cerr := s.Clients.GetClient(ctx, v1beta1.ClusterLocal)
		if cerr != nil {
			wait(cerr.Error())
			continue
		}
		params, perr := step.CustomParams(s.Flow.Values())
		if perr != nil {
			s.Flow.Settle(name, workflow.Verdict{Phase: v1beta1.WorkflowStepFailed, Reason: steprun.ReasonTemplate, Message: perr.Error()})
			continue
		}
		env := &provider.Env{Namespace: s.App.Namespace, App: s.App.Name, Step: name, Client: local,
			Boundary: r.boundary(s), Managed: r.managedBy(s), MaxResultBytes: r.Options.MaxStepActionResult.Value(),
			Log: log.WithValues("step", name)}
		runner := steprun.Runner{Renderer: r.Renderer, Providers: r.stepProviders().With(provider.Kube(stepKube{r: r, s: s, step: name})),
			Background: r.StepJobs, MaxRunBytes: r.Options.MaxStepResult.Value()}
		out := runner.Run(ctx, env, steprun.Step{
			Name: name, Type: step.Type, Definition: &def.ObjectMeta, Template: def.Spec.Schematic.CUE.Template,
			Params: params, Context: stepContext(s, name, ss.ID), Outputs: step.Outputs, Resumed: custom[name], Started: started,
			Run: steprun.RunID{App: client.ObjectKeyFromObject(s.App), Run: string(s.App.UID) + "/" + record.RunKey(s.Flow.Status) + "/" + name},
		})
		log.V(decisionlog.Decision).Info("Ran workflow step", "step", name, "type", step.Type, "phase", out.Phase, "reason", out.Reason, "message", out.Message, "actions", out.Actions)
		if out.Phase == v1beta1.WorkflowStepSucceeded && len(out.Values) > 0 {
			s.Flow.Export(out.Values)
			raw, _ := json.Marshal(record.RunOutputs{Run: record.RunKey(s.Flow.Status), Values: s.Flow.Values()})
			if err := r.Trackers.Annotate(ctx, s.Current, tracker.AnnotationWorkflowOutputs, string(raw)); err != nil {
				wait("recording its outputs: " + err.Error())
				continue
			}
		}
		if out.Phase == v1beta1.WorkflowStepFailed {
			r.Recorder.Eventf(s.App, nil, "Warning", "WorkflowStepFailed", "RunStep", "step %q (%s): %s", name, step.Type, out.Message)
		}
		s.Flow.Settle(name, out.Verdict)
		if out.Reason == steprun.ReasonApplying {
			// It recorded objects: the next pass applies them and runs
			// the step again.
			s.StepRecorded = true
		}
	}
	return nil
}

// stepContext is KubeVela's step context.
func stepContext(s *facts.Pass, step, sessionID string) map[string]any {
	rev := ""
	if s.Current != nil {
		rev = status.LiveRevision(s.App, s.Current).Name
	}
	return map[string]any{
		"name":           s.App.Name,
		"namespace":      s.App.Namespace,
		"appName":        s.App.Name,
		"appRevision":    rev,
		"workflowName":   s.App.Name,
		"publishVersion": s.App.Annotations[v1beta1.AnnotationPublishVersion],
		"stepName":       step,
		"stepSessionID":  sessionID,
		"spanID":         sessionID,
		"appLabels":      nonNil(s.App.Labels),
		"appAnnotations": nonNil(s.App.Annotations),
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
func (r *Reconciler) managedBy(s *facts.Pass) func(*unstructured.Unstructured) string {
	return func(obj *unstructured.Unstructured) string {
		if r.tracked(s, v1beta1.ClusterLocal, obj) {
			return "this Application"
		}
		return ""
	}
}

// stepProviders are the provider actions custom steps may use besides
// vela/kube's.
func (r *Reconciler) stepProviders() provider.Registry {
	if r.StepProviders == nil {
		return provider.Registry{}
	}
	return r.StepProviders
}

// missingStepDefinitions refuses a version whose workflow names a custom
// step type with no WorkflowStepDefinition, in the Application's
// namespace or the system namespace: nothing of it is recorded, as for
// an unknown component type.
func (r *Reconciler) missingStepDefinitions(ctx context.Context, app *v1beta1.Application) error {
	types := workflow.CustomTypes(workflow.Of(app))
	if len(types) == 0 {
		return nil
	}
	defs, err := r.resolver().Steps(ctx, app)
	if err != nil {
		return &facts.ReasonError{Reason: v1beta1.ReasonDefinitionNotFound, Err: err}
	}
	wf := workflow.Of(app)
	names := workflow.Namer{}
	var missing error
	visit := func(s v1beta1.WorkflowStepBase) {
		name := names.Name(s)
		if missing == nil && !workflow.Native(s.Type) && defs[s.Type] == nil {
			missing = &facts.ReasonError{Reason: v1beta1.ReasonDefinitionNotFound, Err: &workflow.MissingDefinitionError{
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

// stepKube is the Application one custom step's vela/kube actions act
// as (provider.Kube): its clients (its identity), the scope of kinds in
// each cluster, the objects its trackers record, and the version's
// tracker, where what the step applies is recorded before it is applied.
// The actions themselves, and the boundary they hold each object to
// before anything is read or sent, are in internal/provider (kube.go).
type stepKube struct {
	r    *Reconciler
	s    *facts.Pass
	step string
}

var _ provider.KubeApp = stepKube{}

// Client reaches a cluster as the Application.
func (k stepKube) Client(ctx context.Context, cluster string) (client.Client, error) {
	return k.s.Clients.GetClient(ctx, cluster)
}

// Namespaced reports whether obj's kind is namespaced in cluster.
func (k stepKube) Namespaced(ctx context.Context, cluster string, obj *unstructured.Unstructured) (bool, error) {
	return k.r.namespacedIn(ctx)(cluster, obj)
}

// Manages reports whether the Application's trackers record obj.
func (k stepKube) Manages(cluster string, obj *unstructured.Unstructured) bool {
	return k.r.tracked(k.s, cluster, obj)
}

// Apply records obj in the version's tracker, under the step
// (applyFromStep).
func (k stepKube) Apply(ctx context.Context, cluster string, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return k.r.applyFromStep(ctx, k.s, k.step, cluster, obj)
}

// applyFromStep records an object a step applies in the version's
// tracker, under the step; keepState applies it (in the next pass, as
// the step is reached). Once it is recorded as it is now and applied, it
// returns the live object; until then provider.ErrPending.
func (r *Reconciler) applyFromStep(ctx context.Context, s *facts.Pass, step, cluster string, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if s.Current == nil {
		return nil, errors.New("no version is recorded to record the object in")
	}
	if obj.GetName() == "" || obj.GetKind() == "" || obj.GetAPIVersion() == "" {
		return nil, errors.New("the object to apply needs apiVersion, kind and metadata.name")
	}
	// Its namespace (the Application's when it has none, none for a
	// cluster-scoped kind) and ownership labels, as rendered objects.
	obj, err := delivery.Settle(s.App, cluster, step, obj, r.namespacedIn(ctx))
	if err != nil {
		return nil, err
	}
	e, err := tracker.Entry(cluster, "", "", obj)
	if err != nil {
		return nil, err
	}
	e.Step = step
	key := tracker.KeyOf(e)
	entries, err := tracker.Entries(s.Current)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(entries, func(x v1beta1.ManagedResource) bool { return tracker.KeyOf(x) == key })
	if i >= 0 && !entries[i].Deleted && entries[i].Step == step && record.SameManifest(entries[i], obj) {
		// Recorded as it is: keepState applied it in this pass.
		for _, f := range s.Keep.Failures {
			if f.Key == key {
				return nil, fmt.Errorf("applying %s: %v", key, f.Err)
			}
		}
		c, err := s.Clients.GetClient(ctx, cluster)
		if err != nil {
			return nil, err
		}
		live := obj.DeepCopy()
		if err := c.Get(ctx, client.ObjectKeyFromObject(live), live); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("%w: %s is recorded and not applied yet", provider.ErrPending, key)
			}
			return nil, err
		}
		return live, nil
	}
	if i >= 0 && entries[i].Step != step && !entries[i].Deleted {
		return nil, provider.Refuse("%s is applied by %s of this Application too: each object comes from one place", key, record.EntrySource(entries[i]))
	}
	if s.Root != nil {
		rootEntries, err := tracker.Entries(s.Root)
		if err != nil {
			return nil, err
		}
		for _, x := range rootEntries {
			if tracker.KeyOf(x) == key && !x.Deleted {
				return nil, provider.Refuse("%s is applied by %s of this Application too: each object comes from one place", key, record.EntrySource(x))
			}
		}
	}
	if i >= 0 {
		entries[i] = e
	} else {
		entries = append(entries, e)
	}
	if err := r.Trackers.Save(ctx, s.Current, entries, 0); err != nil {
		return nil, err
	}
	decisionlog.For(ctx, key, decisionlog.Decision).Info("Recorded: a workflow step applies it; it is applied next", "step", step)
	s.StepRecorded = true
	return nil, fmt.Errorf("%w: %s recorded, to be applied", provider.ErrPending, key)
}

// tracked reports whether an object is recorded in one of the
// Application's trackers.
func (r *Reconciler) tracked(s *facts.Pass, cluster string, obj *unstructured.Unstructured) bool {
	want := tracker.KeyOf(v1beta1.ManagedResource{ClusterObjectReference: v1beta1.ClusterObjectReference{
		Cluster: cluster, APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}})
	for _, rt := range []*v1beta1.ResourceTracker{s.Current, s.Root} {
		if rt == nil {
			continue
		}
		entries, err := tracker.Entries(rt)
		if err != nil {
			return true
		}
		for _, e := range entries {
			if !e.Deleted && tracker.KeyOf(e) == want {
				return true
			}
		}
	}
	return false
}
