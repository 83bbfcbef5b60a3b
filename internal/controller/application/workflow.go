package application

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/application/decisionlog"
	"github.com/steward-oam/steward/internal/controller/application/facts"
	"github.com/steward-oam/steward/internal/controller/application/record"
	"github.com/steward-oam/steward/internal/controller/application/status"
	"github.com/steward-oam/steward/internal/delivery"
	"github.com/steward-oam/steward/internal/inventory"
	"github.com/steward-oam/steward/internal/tracker"
	"github.com/steward-oam/steward/internal/workflow"
)

// advanceWorkflow starts the pass's run of the version being kept
// (s.Run, a workflow.Run), whose Status is status.workflow once
// finishWorkflow has judged it:
//
//   - A version rendered from a workflow with gates (suspend steps, and
//     anything else not delivered in one pass) runs them: the run decides
//     which deploy steps this pass applies. The whole version is recorded
//     before anything is applied, as always, with the steps it was
//     rendered with (tracker.AnnotationWorkflowSteps) and, on each object, its
//     step; keepState applies only the objects of steps the run has
//     reached. Until the run finishes, garbage collection of earlier
//     versions waits, so that what the steps not yet reached will replace
//     stays in place. The run follows the recorded steps, not the spec: a
//     spec edited under the same publishVersion, a new generation that
//     fails to render, or a rollback keeps the steps of the version being
//     kept. This run is also s.Flow.
//   - A workflow refused before anything of its version was applied, or
//     recorded steps that cannot run (s.FlowErr), is a refused run.
//   - Any other version is delivered in one pass, and its run reports the
//     steps KubeVela would show for it.
//
// Without a version (nothing recorded yet) there is no run.
func (r *Reconciler) advanceWorkflow(ctx context.Context, s *facts.Pass) error {
	now := time.Now()
	prev := s.App.Status.Workflow
	if s.Current != nil && tracker.Mark(s.Current, tracker.AnnotationWorkflowSteps) != "" {
		flow, err := workflow.Decode(tracker.Mark(s.Current, tracker.AnnotationWorkflowSteps))
		if err == nil {
			err = checkRecordedSteps(s.Current, flow)
		}
		if err == nil {
			r.advanceGated(ctx, s, flow, now)
			return nil
		}
		s.FlowErr = err
	}
	switch err := facts.WorkflowRefusal(s); {
	case err != nil:
		rev := delivery.RevisionNameOf(s.App.Name, s.App.Annotations[v1beta1.AnnotationPublishVersion], s.App.Generation)
		s.Run = workflow.RefusedRun(s.App, rev, err, prev, now)
	case s.Current != nil:
		s.Run = workflow.OnePassRun(s.App, prev, status.LiveRevision(s.App, s.Current).Name, now)
	}
	return nil
}

// advanceGated runs the gates of the version kept: the steps of flow
// this pass reaches.
func (r *Reconciler) advanceGated(ctx context.Context, s *facts.Pass, flow workflow.Flow, now time.Time) {
	rev := status.LiveRevision(s.App, s.Current).Name
	flow.Use(r.Renderer.Evaluator())
	s.Flow = workflow.AdvanceWith(flow, s.App.Status.Workflow, rev, now, record.RunData(s, flow))
	s.Run = s.Flow
	if err := r.forgetOutputs(ctx, s); err != nil {
		s.SetRetry(err)
	}
	log := ctrl.LoggerFrom(ctx).V(decisionlog.Decision)
	switch s.Flow.Status.Phase {
	case v1beta1.WorkflowPhaseSuspending:
		log.Info("Workflow suspended: the steps after it apply nothing until it is resumed", "revision", rev, "message", s.Flow.Status.Message)
	case v1beta1.WorkflowPhaseTerminated:
		log.Info("Workflow terminated: the steps it had not reached apply nothing", "revision", rev)
	}
}

// checkRecordedSteps fails closed when the version's objects do not all
// name one of its recorded deploy steps: a ResourceTracker CRD from before
// steps were recorded prunes the field, and an object without its step
// would be applied whatever the gate says.
func checkRecordedSteps(rt *v1beta1.ResourceTracker, flow workflow.Flow) error {
	deploys := flow.Delivering()
	entries, err := tracker.Entries(rt)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Data != nil && !e.Deleted && !deploys[e.Step] {
			return fmt.Errorf("resource tracker %s records %s without its workflow step (%q): the ResourceTracker CRD may predate workflow steps; upgrade the CRDs (config/crd, or the chart's crds/, which helm upgrade does not update)", rt.Name, tracker.KeyOf(e), e.Step)
		}
	}
	return nil
}

// finishWorkflow completes, after keepState and health, the pass's run
// (workflow.Run.Finish) with what the pass found (passJudge).
func (r *Reconciler) finishWorkflow(ctx context.Context, s *facts.Pass) error {
	if s.Run == nil {
		return nil
	}
	s.Run.Finish(r.judge(ctx, s), time.Now())
	return nil
}

// passJudge is what a pass found of the steps of its run
// (workflow.Judge).
type passJudge struct {
	r   *Reconciler
	ctx context.Context
	s   *facts.Pass
	// entries are the version's applied entries, decoded once for every
	// step judged, and blocked the steps whose objects this pass did not
	// all apply (blockedSteps); only for a gated run.
	entries    []v1beta1.ManagedResource
	entriesErr error
	blocked    map[string]bool
}

func (r *Reconciler) judge(ctx context.Context, s *facts.Pass) *passJudge {
	j := &passJudge{r: r, ctx: ctx, s: s}
	if s.Flow != nil {
		j.entries, j.entriesErr = inventory.AppliedOf(s.Current, s.Root)
		j.blocked = blockedSteps(s, j.entries, j.entriesErr)
	}
	return j
}

// Done reports whether a step of a gated run has succeeded. A delivering
// step succeeds when every object of the step was applied (by a pass
// that could apply: valid policies and identity, a version recorded, no
// failure of the step's objects or clusters, none of its components
// waiting) and every component the step delivers is healthy by its
// definition's health policy, as KubeVela's deploy step waits for, and
// its outputs were exported. A depends-on-app step succeeds once the
// Application it names is running. A step that succeeded is not judged
// again; steps running together are judged each on its own.
func (j *passJudge) Done(name string) (bool, string) {
	s := j.s
	step, _ := s.Flow.Step(name)
	if step.Type == v1beta1.WorkflowStepTypeDependsOnApp {
		return j.r.appRunning(j.ctx, s, step.App)
	}
	if j.blocked == nil || j.blocked[name] {
		return false, "waiting until every object of the step is applied"
	}
	if sick := unhealthyInStep(s, j.entries, j.entriesErr, name); len(sick) > 0 {
		return false, "waiting for components to become healthy: " + strings.Join(sick, ", ")
	}
	if err := j.r.exportOutputs(j.ctx, s, j.entries, step); err != nil {
		return false, "waiting for its outputs: " + err.Error()
	}
	return true, ""
}

// Delivery is what the pass found of each component of a version
// delivered in one pass: whether it kept the version, the components
// whose objects failed or wait for their dependencies, and those not
// healthy.
func (j *passJudge) Delivery() workflow.Delivery {
	s := j.s
	d := workflow.Delivery{Kept: s.Keep.Ran, Waiting: s.Keep.Waiting}
	for _, f := range s.Keep.Failures {
		msg := ""
		if f.Err != nil {
			msg = f.Err.Error()
		}
		d.Failed = append(d.Failed, workflow.Note{Component: f.Component, Message: msg})
	}
	for k, h := range s.Health {
		if !h.Healthy {
			c, _, _ := facts.SplitHealthKey(k)
			d.Unhealthy = append(d.Unhealthy, workflow.Note{Component: c, Message: h.Message})
		}
	}
	return d
}

// blockedSteps returns the steps whose objects this pass did not all
// apply: an object or cluster of the step failed, or a component of it
// waits for a dependency. nil means every step (the pass could not apply,
// or a failure names no object of the version).
func blockedSteps(s *facts.Pass, entries []v1beta1.ManagedResource, entriesErr error) map[string]bool {
	if !s.Keep.Ran || s.RulesErr != nil || s.IdentityErr != nil || s.RecordErr != nil || entriesErr != nil {
		return nil
	}
	blocked := map[string]bool{}
	byKey := make(map[tracker.Key]string, len(entries))
	byCluster := map[string][]string{}
	byComponent := map[string][]string{}
	for _, e := range entries {
		if e.Step == "" {
			continue
		}
		byKey[tracker.KeyOf(e)] = e.Step
		c := v1beta1.ClusterKey(e.Cluster)
		byCluster[c] = append(byCluster[c], e.Step)
		byComponent[e.Component] = append(byComponent[e.Component], e.Step)
	}
	for _, f := range s.Keep.Failures {
		if step, ok := byKey[f.Key]; ok {
			blocked[step] = true
			continue
		}
		if f.Key.Kind != "" || f.Key.Name != "" {
			// An object of no step: nothing can be told apart.
			return nil
		}
		// The cluster failed: every step with objects there.
		for _, step := range byCluster[v1beta1.ClusterKey(f.Key.Cluster)] {
			blocked[step] = true
		}
	}
	for _, c := range s.Keep.Waiting {
		for _, step := range byComponent[c] {
			blocked[step] = true
		}
	}
	return blocked
}

// appRunning reports whether the Application a depends-on-app step waits
// for ("namespace/name", the namespace empty for this Application's) is
// running, and otherwise what it is. One of this namespace is read from
// the cache; one of another namespace with this Application's identity,
// so that a tenant reads only what its ServiceAccount may.
func (r *Reconciler) appRunning(ctx context.Context, s *facts.Pass, ref string) (bool, string) {
	namespace, name, _ := strings.Cut(ref, "/")
	if namespace == "" {
		namespace = s.App.Namespace
	}
	other := &v1beta1.Application{}
	key := client.ObjectKey{Namespace: namespace, Name: name}
	var err error
	if namespace == s.App.Namespace {
		err = r.Client.Get(ctx, key, other)
	} else if s.IdentityErr != nil {
		err = s.IdentityErr
	} else {
		var c client.Client
		if c, err = s.Clients.GetClient(ctx, v1beta1.ClusterLocal); err == nil {
			err = c.Get(ctx, key, other)
		}
	}
	switch {
	case apierrors.IsNotFound(err):
		return false, fmt.Sprintf("waiting for Application %s/%s, which does not exist", namespace, name)
	case err != nil:
		return false, fmt.Sprintf("reading Application %s/%s: %v", namespace, name, err)
	case other.Status.Phase != v1beta1.ApplicationRunning:
		phase := string(other.Status.Phase)
		if phase == "" {
			phase = "not reconciled yet"
		}
		return false, fmt.Sprintf("waiting for Application %s/%s to be running (it is %s)", namespace, name, phase)
	}
	return true, ""
}

// unhealthyInStep names the components (with their cluster and health
// message) the step delivers that are not healthy yet; health not
// evaluated counts as not healthy.
func unhealthyInStep(s *facts.Pass, entries []v1beta1.ManagedResource, entriesErr error, step string) []string {
	if step == "" {
		return nil
	}
	if s.Health == nil {
		return []string{"health not evaluated yet"}
	}
	if entriesErr != nil {
		return []string{entriesErr.Error()}
	}
	seen := map[string]bool{}
	var sick []string
	for _, e := range entries {
		if e.Step != step || e.Component == "" {
			continue
		}
		k := facts.HealthKey(e.Component, e.Cluster, e.Step)
		if seen[k] {
			continue
		}
		seen[k] = true
		// A component the spec no longer names is not judged.
		if h, ok := s.Health[k]; ok && !h.Healthy {
			name := e.Component
			if !v1beta1.IsLocalCluster(e.Cluster) {
				name += " in cluster " + e.Cluster
			}
			if h.Message != "" {
				name += " (" + h.Message + ")"
			}
			sick = append(sick, name)
		}
	}
	slices.Sort(sick)
	return sick
}
