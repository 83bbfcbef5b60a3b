package application

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/delivery"
	"github.com/steward-oam/steward/internal/inventory"
	"github.com/steward-oam/steward/internal/tracker"
	"github.com/steward-oam/steward/internal/workflow"
)

// advanceWorkflow starts the pass's run of the version being kept
// (s.run, a workflow.Run), whose Status is status.workflow once
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
//     kept. This run is also s.flow.
//   - A workflow refused before anything of its version was applied, or
//     recorded steps that cannot run (s.flowErr), is a refused run.
//   - Any other version is delivered in one pass, and its run reports the
//     steps KubeVela would show for it.
//
// Without a version (nothing recorded yet) there is no run.
func (r *Reconciler) advanceWorkflow(ctx context.Context, s *scope) error {
	now := time.Now()
	prev := s.app.Status.Workflow
	if s.current != nil && tracker.Mark(s.current, tracker.AnnotationWorkflowSteps) != "" {
		flow, err := workflow.Decode(tracker.Mark(s.current, tracker.AnnotationWorkflowSteps))
		if err == nil {
			err = checkRecordedSteps(s.current, flow)
		}
		if err == nil {
			r.advanceGated(ctx, s, flow, now)
			return nil
		}
		s.flowErr = err
	}
	switch err := workflowRefusal(s); {
	case err != nil:
		rev := delivery.RevisionNameOf(s.app.Name, s.app.Annotations[v1beta1.AnnotationPublishVersion], s.app.Generation)
		s.run = workflow.RefusedRun(s.app, rev, err, prev, now)
	case s.current != nil:
		s.run = workflow.OnePassRun(s.app, prev, liveRevision(s.app, s.current).Name, now)
	}
	return nil
}

// advanceGated runs the gates of the version kept: the steps of flow
// this pass reaches.
func (r *Reconciler) advanceGated(ctx context.Context, s *scope, flow workflow.Flow, now time.Time) {
	rev := liveRevision(s.app, s.current).Name
	flow.Use(r.Renderer.Evaluator())
	s.flow = workflow.AdvanceWith(flow, s.app.Status.Workflow, rev, now, runData(s, flow))
	s.run = s.flow
	if err := r.forgetOutputs(ctx, s); err != nil {
		s.setRetry(err)
	}
	log := ctrl.LoggerFrom(ctx).V(decisionLevel)
	switch s.flow.Status.Phase {
	case v1beta1.WorkflowPhaseSuspending:
		log.Info("Workflow suspended: the steps after it apply nothing until it is resumed", "revision", rev, "message", s.flow.Status.Message)
	case v1beta1.WorkflowPhaseTerminated:
		log.Info("Workflow terminated: the steps it had not reached apply nothing", "revision", rev)
	}
}

// workflowRefusal is why the newest generation's workflow was refused
// (nothing of it applied), or why the kept version's recorded steps
// cannot run; nil otherwise.
func workflowRefusal(s *scope) error {
	if s.flowErr != nil {
		return s.flowErr
	}
	if s.renderErr != nil && reasonOf(s.renderErr, "") == v1beta1.ReasonUnsupportedWorkflow {
		return s.renderErr
	}
	if errors.As(s.renderErr, new(*workflow.MissingDefinitionError)) {
		// A step type with no definition: the step at fault fails.
		return s.renderErr
	}
	return nil
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
func (r *Reconciler) finishWorkflow(ctx context.Context, s *scope) error {
	if s.run == nil {
		return nil
	}
	s.run.Finish(r.judge(ctx, s), time.Now())
	return nil
}

// passJudge is what a pass found of the steps of its run
// (workflow.Judge).
type passJudge struct {
	r   *Reconciler
	ctx context.Context
	s   *scope
	// entries are the version's applied entries, decoded once for every
	// step judged, and blocked the steps whose objects this pass did not
	// all apply (blockedSteps); only for a gated run.
	entries    []v1beta1.ManagedResource
	entriesErr error
	blocked    map[string]bool
}

func (r *Reconciler) judge(ctx context.Context, s *scope) *passJudge {
	j := &passJudge{r: r, ctx: ctx, s: s}
	if s.flow != nil {
		j.entries, j.entriesErr = inventory.AppliedOf(s.current, s.root)
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
	step, _ := s.flow.Step(name)
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
	d := workflow.Delivery{Kept: s.keep.ran, Waiting: s.keep.waiting}
	for _, f := range s.keep.failures {
		msg := ""
		if f.Err != nil {
			msg = f.Err.Error()
		}
		d.Failed = append(d.Failed, workflow.Note{Component: f.Component, Message: msg})
	}
	for k, h := range s.health {
		if !h.Healthy {
			c, _, _ := splitHealthKey(k)
			d.Unhealthy = append(d.Unhealthy, workflow.Note{Component: c, Message: h.Message})
		}
	}
	return d
}

// blockedSteps returns the steps whose objects this pass did not all
// apply: an object or cluster of the step failed, or a component of it
// waits for a dependency. nil means every step (the pass could not apply,
// or a failure names no object of the version).
func blockedSteps(s *scope, entries []v1beta1.ManagedResource, entriesErr error) map[string]bool {
	if !s.keep.ran || s.rulesErr != nil || s.identityErr != nil || s.recordErr != nil || entriesErr != nil {
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
	for _, f := range s.keep.failures {
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
	for _, c := range s.keep.waiting {
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
func (r *Reconciler) appRunning(ctx context.Context, s *scope, ref string) (bool, string) {
	namespace, name, _ := strings.Cut(ref, "/")
	if namespace == "" {
		namespace = s.app.Namespace
	}
	other := &v1beta1.Application{}
	key := client.ObjectKey{Namespace: namespace, Name: name}
	var err error
	if namespace == s.app.Namespace {
		err = r.Client.Get(ctx, key, other)
	} else if s.identityErr != nil {
		err = s.identityErr
	} else {
		var c client.Client
		if c, err = s.clients.GetClient(ctx, v1beta1.ClusterLocal); err == nil {
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
func unhealthyInStep(s *scope, entries []v1beta1.ManagedResource, entriesErr error, step string) []string {
	if step == "" {
		return nil
	}
	if s.health == nil {
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
		k := healthKey(e.Component, e.Cluster, e.Step)
		if seen[k] {
			continue
		}
		seen[k] = true
		// A component the spec no longer names is not judged.
		if h, ok := s.health[k]; ok && !h.Healthy {
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

// gatedEntry reports whether an entry belongs to a step the run has not
// reached, or skipped: it is neither applied nor deleted in this pass.
// Step names are ignored when the version being kept has no gated
// workflow (a root entry recorded by an earlier, gated version).
func (s *scope) gatedEntry(e v1beta1.ManagedResource) bool {
	switch {
	case e.Step == "":
		return false
	case s.flowErr != nil:
		return true
	case s.recordErr != nil:
		// The new render's root entries were recorded but not its
		// version: their steps belong to a run that has not started.
		return true
	case s.flow == nil:
		return false
	}
	return !s.flow.Reached[e.Step]
}

// dispatching reports whether an entry belongs to the deploy step the run
// reaches in this pass: it is applied as a dispatch (apply-once fields
// written, created even in report-only drift mode), as a newly recorded
// version is.
func (s *scope) dispatching(e v1beta1.ManagedResource) bool {
	return s.fresh || s.flow.Dispatches(e.Step)
}
