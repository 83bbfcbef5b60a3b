package status

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/apprevision"
	"github.com/steward-oam/steward/internal/controller/application/facts"
	"github.com/steward-oam/steward/internal/delivery"
	"github.com/steward-oam/steward/internal/policy"
	"github.com/steward-oam/steward/internal/tracker"
)

// Compute turns the facts of a pass into the Application's status.
// It is pure: the same facts give the same status, and conditions only
// move their transition time when their status changes.
func Compute(s *facts.Pass, now time.Time) {
	if s.Deleting {
		Deleting(s, now)
		return
	}
	st := &s.App.Status
	st.ObservedGeneration = s.App.Generation
	gen := s.App.Generation
	// KubeVela's own condition types are left from before Steward took
	// the Application over: nothing would update them again.
	s.DroppedConditions = DropKubeVelaConditions(&st.Conditions)
	set := func(c v1beta1.Condition) {
		c.ObservedGeneration = gen
		c.LastTransitionTime = metav1.NewTime(now)
		setCondition(&st.Conditions, c)
	}
	set(renderedCondition(s))
	set(dispatchedCondition(s))
	set(stateKeptCondition(s))
	set(healthyCondition(s))
	set(garbageCollectedCondition(s))
	set(readyCondition(st.Conditions))
	st.Phase = PhaseOf(st.Conditions)
	if s.Current != nil && (s.Revisions.Failed == "" || s.Revisions.Failed != s.Current.Labels[v1beta1.LabelAppRevision]) {
		// A revision whose write failed is not named: the next pass, not
		// finding it named, writes it again.
		st.LatestRevision = LiveRevision(s.App, s.Current)
	}
	st.Services, st.AppliedResources = servicesAndResources(s)
	// The pass's run, whatever its kind (advanceWorkflow), is the only
	// writer of status.workflow.
	st.Workflow = s.Run.Report()
}

// Deleting shows the deletion: phase deleting and Ready False with
// reason Deleting, set once; the other conditions stay as the last pass
// left them.
func Deleting(s *facts.Pass, now time.Time) {
	st := &s.App.Status
	if st.Phase == v1beta1.ApplicationDeleting {
		return
	}
	st.Phase = v1beta1.ApplicationDeleting
	setCondition(&st.Conditions, v1beta1.Condition{Type: v1beta1.ConditionReady, Status: metav1.ConditionFalse, Reason: v1beta1.ReasonDeleting,
		Message: "deleting the objects the application created", ObservedGeneration: s.App.Generation, LastTransitionTime: metav1.NewTime(now)})
}

func renderedCondition(s *facts.Pass) v1beta1.Condition {
	c := v1beta1.Condition{Type: v1beta1.ConditionRendered, Status: metav1.ConditionTrue, Reason: v1beta1.ReasonSucceeded,
		Message: fmt.Sprintf("generation %d rendered", s.App.Generation)}
	if s.RenderErr != nil {
		c.Status = metav1.ConditionFalse
		c.Reason = facts.ReasonOf(s.RenderErr, v1beta1.ReasonRenderFailed)
		c.Message = s.RenderErr.Error()
		if s.Current != nil {
			c.Message += fmt.Sprintf("; generation %d stays applied", s.Current.Spec.ApplicationGeneration)
		}
	}
	return c
}

func dispatchedCondition(s *facts.Pass) v1beta1.Condition {
	c := v1beta1.Condition{Type: v1beta1.ConditionDispatched, Status: metav1.ConditionTrue, Reason: v1beta1.ReasonSucceeded}
	switch {
	case s.RecordErr != nil:
		c.Status, c.Reason = metav1.ConditionFalse, v1beta1.ReasonRecordFailed
		c.Message = s.RecordErr.Error()
	case s.IdentityErr != nil:
		c.Status, c.Reason = metav1.ConditionFalse, v1beta1.ReasonInvalidServiceAccount
		c.Message = "nothing is applied or deleted until the service account is fixed"
	case s.RulesErr != nil:
		c.Status, c.Reason = metav1.ConditionFalse, v1beta1.ReasonInvalidPolicy
		c.Message = "nothing is applied or deleted until the policies are fixed"
	case facts.WorkflowRefusal(s) != nil && s.RenderErr != nil:
		c.Status, c.Reason = metav1.ConditionFalse, v1beta1.ReasonWorkflowFailed
		c.Message = fmt.Sprintf("the workflow of generation %d cannot run, so nothing of it was dispatched", s.App.Generation)
	case s.RenderErr != nil:
		c.Status, c.Reason = metav1.ConditionFalse, v1beta1.ReasonRenderFailed
		c.Message = fmt.Sprintf("generation %d was not rendered, so it was not dispatched", s.App.Generation)
	case len(s.Keep.Failures) > 0:
		c.Status, c.Reason = metav1.ConditionFalse, s.Keep.Failures[0].Reason
		c.Message = DescribeFailures(s.Keep.Failures, FailureListLimit)
		if c.Reason == v1beta1.ReasonKindNotFound {
			c.Message += "; install the CustomResourceDefinition that serves the kind"
		}
	case len(s.Keep.Waiting) > 0:
		c.Status, c.Reason = metav1.ConditionFalse, v1beta1.ReasonDependencyNotReady
		c.Message = "waiting for dependencies of components " + strings.Join(s.Keep.Waiting, ", ")
		if len(s.Keep.UnhealthyDeps) > 0 {
			c.Message += ": " + strings.Join(s.Keep.UnhealthyDeps, "; ")
		}
	case workflowPending(s):
		c.Status = metav1.ConditionFalse
		c.Reason, c.Message, _ = workflowCondition(s)
	case !s.Keep.Ran:
		c.Status, c.Reason = metav1.ConditionFalse, v1beta1.ReasonProgressing
		c.Message = "nothing recorded yet"
	default:
		c.Message = fmt.Sprintf("%d objects applied", s.Keep.Applied)
	}
	return c
}

func healthyCondition(s *facts.Pass) v1beta1.Condition {
	c := v1beta1.Condition{Type: v1beta1.ConditionHealthy, Status: metav1.ConditionTrue, Reason: v1beta1.ReasonSucceeded,
		Message: "every component is healthy"}
	if s.Health == nil {
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, v1beta1.ReasonProgressing, "not evaluated: nothing applied yet"
		return c
	}
	var bad []string
	reason := v1beta1.ReasonUnhealthy
	keys := make([]string, 0, len(s.Health))
	for k := range s.Health {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		h := s.Health[k]
		if h.Healthy {
			continue
		}
		comp, clusterName, step := facts.SplitHealthKey(k)
		msg := fmt.Sprintf("component %q", comp)
		if clusterName != "" {
			msg += fmt.Sprintf(" in cluster %q", clusterName)
		}
		if step != "" {
			msg += fmt.Sprintf(" (workflow step %q)", step)
		}
		if h.Message != "" {
			msg += ": " + h.Message
		}
		bad = append(bad, msg)
		if h.Reason != "" && reason == v1beta1.ReasonUnhealthy {
			// Health could not be evaluated within the budget: the
			// definition is at fault, not the workload.
			reason = h.Reason
		}
	}
	if len(bad) > 0 {
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, reason, strings.Join(bad, "; ")
	}
	return c
}

func stateKeptCondition(s *facts.Pass) v1beta1.Condition {
	c := v1beta1.Condition{Type: v1beta1.ConditionStateKept, Status: metav1.ConditionTrue, Reason: v1beta1.ReasonSucceeded,
		Message: "every recorded object matches its manifest"}
	if len(s.Keep.Drifted) > 0 {
		c.Status, c.Reason = metav1.ConditionFalse, v1beta1.ReasonDriftDetected
		c.Message = "drift found and not repaired (app.oam.dev/drift-mode=report): " + DescribeChanges(s.Keep.Drifted)
		return c
	}
	switch {
	case s.IdentityErr != nil:
		c.Status, c.Reason = metav1.ConditionFalse, v1beta1.ReasonInvalidServiceAccount
		c.Message = "not kept while the service account is invalid"
	case s.RulesErr != nil:
		c.Status, c.Reason = metav1.ConditionFalse, v1beta1.ReasonInvalidPolicy
		c.Message = "not kept while the policies are invalid"
	case !s.Keep.Ran:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, v1beta1.ReasonStateKeepFailed, "nothing recorded yet"
	case len(s.Keep.Failures) > 0:
		c.Status, c.Reason = metav1.ConditionFalse, v1beta1.ReasonStateKeepFailed
		c.Message = "not every recorded object could be applied"
	}
	return c
}

func garbageCollectedCondition(s *facts.Pass) v1beta1.Condition {
	c := v1beta1.Condition{Type: v1beta1.ConditionGarbageCollected, Status: metav1.ConditionTrue, Reason: v1beta1.ReasonSucceeded,
		Message: "nothing left to delete"}
	switch {
	case len(s.GC.Failures) > 0:
		c.Status, c.Reason = metav1.ConditionFalse, v1beta1.ReasonDeleteFailed
		c.Message = DescribeFailures(s.GC.Failures, FailureListLimit) + "; the objects stay recorded and deletion is retried"
	case len(s.GC.Pending) > 0:
		c.Status, c.Reason = metav1.ConditionFalse, v1beta1.ReasonProgressing
		c.Message = fmt.Sprintf("waiting for %d objects to go: %s", len(s.GC.Pending), KeysString(s.GC.Pending, FailureListLimit))
	case s.GC.Skipped:
		c.Status, c.Reason = metav1.ConditionUnknown, v1beta1.ReasonProgressing
		c.Message = "waiting for the current version to be applied before deleting what older versions created"
	}
	return c
}

// readyCondition summarises the others: the first one that is not True
// gives Ready its reason and message.
func readyCondition(conds []v1beta1.Condition) v1beta1.Condition {
	for _, t := range []string{v1beta1.ConditionRendered, v1beta1.ConditionDispatched, v1beta1.ConditionStateKept, v1beta1.ConditionHealthy} {
		if c := v1beta1.FindCondition(conds, t); c != nil && c.Status != metav1.ConditionTrue {
			return v1beta1.Condition{Type: v1beta1.ConditionReady, Status: metav1.ConditionFalse, Reason: c.Reason, Message: c.Message}
		}
	}
	return v1beta1.Condition{Type: v1beta1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1beta1.ReasonSucceeded,
		Message: "rendered, dispatched, kept and healthy"}
}

func PhaseOf(conds []v1beta1.Condition) v1beta1.ApplicationPhase {
	switch {
	case v1beta1.IsConditionTrue(conds, v1beta1.ConditionReady):
		return v1beta1.ApplicationRunning
	case v1beta1.IsConditionFalse(conds, v1beta1.ConditionRendered):
		switch v1beta1.FindCondition(conds, v1beta1.ConditionRendered).Reason {
		case v1beta1.ReasonUnsupportedWorkflow, v1beta1.ReasonWorkflowFailed:
			// The components render but the workflow cannot run, or a
			// render failed permanently (a Helm chart) and the workflow ended.
			return v1beta1.ApplicationWorkflowFailed
		}
		return v1beta1.ApplicationRendering
	case v1beta1.IsConditionFalse(conds, v1beta1.ConditionDispatched):
		switch v1beta1.FindCondition(conds, v1beta1.ConditionDispatched).Reason {
		case v1beta1.ReasonWorkflowSuspended:
			return v1beta1.ApplicationWorkflowSuspending
		case v1beta1.ReasonWorkflowTerminated:
			return v1beta1.ApplicationWorkflowTerminated
		case v1beta1.ReasonWorkflowRunning:
			return v1beta1.ApplicationRunningWorkflow
		}
		return v1beta1.ApplicationWorkflowFailed
	case v1beta1.IsConditionFalse(conds, v1beta1.ConditionHealthy):
		return v1beta1.ApplicationUnhealthy
	default:
		return v1beta1.ApplicationRunningWorkflow
	}
}

// servicesAndResources reports each component of the kept version and
// every object it records. Without a health policy a component is healthy
// when all of its objects were applied, as in KubeVela.
func servicesAndResources(s *facts.Pass) ([]v1beta1.ApplicationComponentStatus, []v1beta1.ClusterObjectReference) {
	var services []v1beta1.ApplicationComponentStatus
	var refs []v1beta1.ClusterObjectReference
	byName := map[string]int{}
	var keys []string // the health key of each service
	failed := map[string]string{}
	for _, f := range s.Keep.Failures {
		if k := facts.HealthKey(f.Component, f.Key.Cluster, ""); f.Component != "" && failed[k] == "" {
			failed[k] = f.Err.Error()
		}
	}
	inSpec := map[string]bool{}
	for name := range policy.ComponentTypes(s.App) {
		inSpec[name] = true
	}
	listed := map[tracker.Key]bool{} // each object once: a version records root's objects too
	for _, rt := range []*v1beta1.ResourceTracker{s.Current, s.Root} {
		if rt == nil {
			continue
		}
		entries, err := tracker.Entries(rt)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if e.Deleted || s.GatedEntry(e) || listed[tracker.KeyOf(e)] {
				// Objects of workflow steps not reached yet are not
				// applied by this version.
				continue
			}
			listed[tracker.KeyOf(e)] = true
			refs = append(refs, v1beta1.ClusterObjectReference{Cluster: e.Cluster, Creator: "workflow",
				APIVersion: e.APIVersion, Kind: e.Kind, Namespace: e.Namespace, Name: e.Name})
			if e.Component == "" || (rt == s.Root && !inSpec[e.Component] && !slices.ContainsFunc(services, func(svc v1beta1.ApplicationComponentStatus) bool { return svc.Name == e.Component })) {
				continue
			}
			svcKey := facts.HealthKey(e.Component, e.Cluster, s.HealthStep(e))
			if _, ok := byName[svcKey]; !ok {
				byName[svcKey] = len(services)
				keys = append(keys, svcKey)
				services = append(services, v1beta1.ApplicationComponentStatus{Name: e.Component, Namespace: e.Namespace,
					Cluster: e.Cluster, Healthy: true})
			}
			svc := &services[byName[svcKey]]
			if e.Trait == "" && svc.WorkloadDefinition == nil {
				svc.WorkloadDefinition = &v1beta1.GroupVersionKindRef{APIVersion: e.APIVersion, Kind: e.Kind}
				svc.Namespace = e.Namespace
			}
			if e.Trait != "" && !slices.ContainsFunc(svc.Traits, func(ts v1beta1.ApplicationTraitStatus) bool { return ts.Type == e.Trait }) {
				svc.Traits = append(svc.Traits, v1beta1.ApplicationTraitStatus{Type: e.Trait, Healthy: true})
			}
		}
	}
	for i := range services {
		svc := &services[i]
		if h, ok := s.Health[keys[i]]; ok {
			svc.Healthy, svc.Message, svc.Details = h.Healthy, h.Message, h.Details
			if len(h.Traits) > 0 {
				svc.Traits = h.Traits
			}
		}
		if msg, bad := failed[facts.HealthKey(svc.Name, svc.Cluster, "")]; bad {
			svc.Healthy = false
			svc.Message = msg
		}
	}
	sort.SliceStable(services, func(i, j int) bool {
		if services[i].Name != services[j].Name {
			return services[i].Name < services[j].Name
		}
		return services[i].Cluster < services[j].Cluster
	})
	return services, refs
}

// LiveRevision names the version a tracker holds: its ApplicationRevision
// (the tracker's app.oam.dev/appRevision label), else "<app>-<publishVersion>"
// for a published version, else "<app>-v<generation>".
func LiveRevision(app *v1beta1.Application, rt *v1beta1.ResourceTracker) *v1beta1.Revision {
	pv := rt.Annotations[v1beta1.AnnotationPublishVersion]
	gen := rt.Spec.ApplicationGeneration
	if n, ok := apprevision.NumberOf(rt.Labels[v1beta1.LabelAppRevision]); ok {
		// The version's ApplicationRevision (package apprev) names it.
		return &v1beta1.Revision{Name: rt.Labels[v1beta1.LabelAppRevision], Revision: n, RevisionHash: pv}
	}
	return &v1beta1.Revision{Name: delivery.RevisionNameOf(app.Name, pv, gen), Revision: gen, RevisionHash: pv}
}

// setCondition sets c, moving its transition time only when its status
// changes.
func setCondition(conds *[]v1beta1.Condition, c v1beta1.Condition) {
	v1beta1.SetCondition(conds, c)
}

// workflowCondition describes a gated run for the Dispatched condition;
// false when there is nothing to say.
func workflowCondition(s *facts.Pass) (reason, message string, ok bool) {
	if s.FlowErr != nil {
		return v1beta1.ReasonUnsupportedWorkflow, s.FlowErr.Error() + "; nothing of the steps is applied", true
	}
	if s.Flow == nil || s.Flow.Succeeded() {
		return "", "", false
	}
	st := s.Flow.Status
	if st.Phase == v1beta1.WorkflowPhaseFailed {
		return v1beta1.ReasonWorkflowFailed, st.Message + "; the steps after it that have no if condition were skipped; fix it and change the Application, or `steward workflow restart " + s.App.Name + "`", true
	}
	switch st.Phase {
	case v1beta1.WorkflowPhaseSuspending:
		return v1beta1.ReasonWorkflowSuspended, fmt.Sprintf("%s; resume it with `steward workflow resume %s` (or `vela workflow resume`)", st.Message, s.App.Name), true
	case v1beta1.WorkflowPhaseTerminated:
		return v1beta1.ReasonWorkflowTerminated, st.Message, true
	}
	var running []string
	describe := func(step v1beta1.StepStatus) {
		msg := fmt.Sprintf("%q", step.Name)
		if step.Message != "" {
			msg += ": " + step.Message
		}
		running = append(running, msg)
	}
	for _, step := range st.Steps {
		if step.Phase != v1beta1.WorkflowStepRunning && step.Phase != v1beta1.WorkflowStepPending {
			continue
		}
		if step.Phase == v1beta1.WorkflowStepPending && len(running) > 0 {
			// Steps one by one: the first pending step is the next.
			break
		}
		n := len(running)
		for _, sub := range step.SubStepsStatus {
			if sub.Phase == v1beta1.WorkflowStepRunning {
				describe(sub)
			}
		}
		if len(running) == n {
			describe(step.StepStatus)
		}
		if step.Phase == v1beta1.WorkflowStepPending {
			break
		}
	}
	if len(running) == 0 {
		return "", "", false
	}
	word := "step"
	if len(running) > 1 {
		word = "steps"
	}
	return v1beta1.ReasonWorkflowRunning, fmt.Sprintf("running workflow %s %s", word, strings.Join(running, "; ")), true
}

// workflowPending reports whether a gated run has steps left to say so in
// the Dispatched condition.
func workflowPending(s *facts.Pass) bool {
	_, _, ok := workflowCondition(s)
	return ok
}
