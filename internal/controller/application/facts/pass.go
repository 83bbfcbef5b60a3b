package facts

import (
	"errors"
	"slices"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cluster"
	"github.com/steward-oam/steward/internal/policy"
	"github.com/steward-oam/steward/internal/render"
	"github.com/steward-oam/steward/internal/tracker"
	"github.com/steward-oam/steward/internal/workflow"
)

// Pass carries one reconcile pass of one Application. Phases only record
// facts here; status.Compute turns the facts into status and conditions.
type Pass struct {
	App *v1beta1.Application

	Actor
	Trackers
	Takeover
	Policies
	RenderReport
	Revisions
	HealthReport
	State

	// StepRecorded is true when a custom workflow step recorded objects
	// in this pass: the next pass applies them at once.
	StepRecorded bool
	// Run is the pass's workflow run of the version kept, whatever its
	// kind (advanceWorkflow): the one writer of status.workflow; nil
	// without a version. flow is run when it is gated (its steps decide
	// what the pass applies), nil for any other workflow. flowErr is why
	// a gated workflow cannot run.
	Run     *workflow.Run
	Flow    *workflow.Run
	FlowErr error
	Keep    KeepReport
	GC      GCReport
}

// Actor is who the pass acts as.
type Actor struct {
	// Identity is the ServiceAccount the Application acts as; zero for
	// Steward's own.
	Identity cluster.Identity
	// Clients reach the clusters as identity: every request for the
	// Application's objects goes through them.
	Clients cluster.Clients
	// IdentityErr is why the identity cannot be used; nothing is applied
	// or deleted while it is set.
	IdentityErr error
}

// Trackers is the Application's trackers as loadTrackers found them.
type Trackers struct {
	// Current is the versioned tracker being kept: the one of the
	// Application's generation once recorded, else the newest earlier one.
	Current *v1beta1.ResourceTracker
	// Root records resources whose lifetime is the Application's.
	Root *v1beta1.ResourceTracker
	// Comprev records the revisions of each component.
	Comprev *v1beta1.ResourceTracker
	// Older are the versioned trackers before current, oldest first,
	// including trackers left by an earlier Application of the same name,
	// and the versioned and component-revision trackers KubeVela left.
	Older []v1beta1.ResourceTracker
	// KubeVelaRoots are the root trackers KubeVela left: what they list
	// is adopted into root before they are deleted.
	KubeVelaRoots []v1beta1.ResourceTracker
	// NewestGeneration is the highest generation any of this Application's
	// versioned trackers was applied at.
	NewestGeneration int64
	// RolledBack is true when an earlier publishVersion became current.
	RolledBack bool
	// ReadFresh is true when trackers were just moved into this shard:
	// the cache may not show them yet, so the pass lists them from the
	// API server.
	ReadFresh bool
	// Recreated names the trackers someone deleted by hand that this pass
	// re-created.
	Recreated []string
}

// Takeover is what the pass took over of what KubeVela left.
type Takeover struct {
	// TakenOver notes what the pass took over or removed of what KubeVela
	// left, for the TakenOverFromKubeVela event.
	TakenOver []string
	// DroppedConditions are KubeVela's condition types the status no
	// longer carries.
	DroppedConditions []string
}

// Policies are the Application's resource policies.
type Policies struct {
	// Rules are the resource policies of the Application.
	Rules *policy.Rules
	// RulesErr is why the policies could not be read.
	RulesErr error
}

// RenderReport is what renderAndRecord found and did.
type RenderReport struct {
	// Releases are the Helm releases this pass's render prepared.
	Releases []*HelmRelease
	// RenderErr is why the current generation could not be rendered.
	RenderErr error
	// RecordErr is why the rendered objects could not be recorded.
	RecordErr error
	// Guarded is true when this pass confirmed, before it recorded, that
	// the Application had no tracker of its own yet and was still there:
	// if it is gone at the end, the pass cleans up (see cleanUpVanished, finalize.go).
	Guarded bool
	// Fresh is true when current was recorded in this pass, so applied
	// changes are a dispatch rather than drift being repaired.
	Fresh bool
	// NewKeys are objects of a freshly recorded version that no tracker
	// listed before: they are created without being read first.
	NewKeys map[tracker.Key]bool
	// Rendered says, for a version rendered in this pass whose workflow
	// steps take inputs, which of them were rendered and with what.
	Rendered *RenderedInputs
	// Refill names the steps of the version kept that this pass renders
	// again, for the values they take.
	Refill map[string]bool
	// Parallelism is the smallest parallelism the deploy steps of a
	// version rendered in this pass set; 0 for none.
	Parallelism int
}

// Revisions is what the pass read and wrote of the Application's
// ApplicationRevisions (apprev.Keeper), so that it reads each once.
type Revisions struct {
	// Listed are the Application's revisions as the pass listed them,
	// valid when RevisionsListed.
	Listed          []v1beta1.ApplicationRevision
	RevisionsListed bool
	// Named is the revision name NameFor gave the tracker this pass
	// recorded: Record goes on for it even when the status names it
	// already.
	Named string
	// Unchecked says Named was given without a list (the first version
	// of a new Application): Record checks it by creating the revision,
	// and lists only when the name is taken.
	Unchecked bool
	// Written is the live version's revision as the pass created or
	// updated it: its status is written over it.
	Written *v1beta1.ApplicationRevision
	// Unwritten names the live version's revision when it is neither
	// taken up nor written, and UnwrittenWhy says why (apprev.unwritable;
	// the ApplicationRevisionNotWritten event says so).
	Unwritten, UnwrittenWhy string
	// Failed names the live version's revision when writing it failed:
	// the status does not name it, so that the next pass writes it.
	Failed string
}

// HealthReport is what evaluateHealth found, for dispatchPostTraits and status.
type HealthReport struct {
	// Workloads are the workload entries health found, per placement,
	// and defs the definitions it resolved: dispatchPostTraits reuses them.
	Workloads []PlacedWorkload
	Defs      render.Definitions
	// Health is each component's health, from the live objects.
	Health map[string]ComponentHealth
	// PostRecorded is true when PostDispatch traits recorded objects in
	// this pass: the next pass, at once, applies them.
	PostRecorded bool
}

// State is how the pass went: stopped early, deleting, retried, written.
type State struct {
	// FullRead is true when watch mode reads every object this pass
	// instead of trusting its cache (--watch-full-read-period).
	FullRead bool
	// FinalizerAdded is true when this pass added Steward's finalizer:
	// the Application may have been deleted as it was (see cleanUpVanished, finalize.go).
	FinalizerAdded bool
	// StatusWritten is true once the pass wrote its status: a deletion
	// writes it before it removes the finalizer, not at the pass's end.
	StatusWritten bool
	// StatusErr is what that write returned.
	StatusErr error
	// Aborted is true when a phase stopped the pass early: the status is
	// left as it is.
	Aborted bool
	// Deleting is true for a pass that deletes the Application's objects
	// (finalize); deletionRetried when deletes failed and are retried,
	// deletionGaveUp when objects in unreachable clusters were given up.
	Deleting        bool
	DeletionRetried bool
	DeletionGaveUp  bool
	// RetryErr is returned from Reconcile so that the work queue retries
	// with back-off; set for failures that may pass by themselves.
	RetryErr error
	// IntervalWarning explains an ignored reconcile-interval annotation.
	IntervalWarning string
}

func NewPass(app *v1beta1.Application) *Pass { return &Pass{App: app} }

// SetRetry remembers the first transient error of the pass.
func (s *Pass) SetRetry(err error) {
	if s.RetryErr == nil {
		s.RetryErr = err
	}
}

// Healthy reports whether every evaluated component is healthy.
// healthy reports whether every component is healthy; a workflow step
// waiting for something else (another Application) is looked at on the
// same back-off.
func (s *Pass) Healthy() bool {
	for _, h := range s.Health {
		if !h.Healthy {
			return false
		}
	}
	return true
}

// HasKubeVelaTrackers reports whether the pass found trackers KubeVela
// wrote.
func (s *Pass) HasKubeVelaTrackers() bool {
	if len(s.KubeVelaRoots) > 0 {
		return true
	}
	for i := range s.Older {
		if tracker.KubeVelas(&s.Older[i]) {
			return true
		}
	}
	return false
}

// GatedEntry reports whether an entry belongs to a step the run has not
// reached, or skipped: it is neither applied nor deleted in this pass.
// Step names are ignored when the version being kept has no gated
// workflow (a root entry recorded by an earlier, gated version).
func (s *Pass) GatedEntry(e v1beta1.ManagedResource) bool {
	switch {
	case e.Step == "":
		return false
	case s.FlowErr != nil:
		return true
	case s.RecordErr != nil:
		// The new render's root entries were recorded but not its
		// version: their steps belong to a run that has not started.
		return true
	case s.Flow == nil:
		return false
	}
	return !s.Flow.Reached[e.Step]
}

// Dispatching reports whether an entry belongs to the deploy step the run
// reaches in this pass: it is applied as a dispatch (apply-once fields
// written, created even in report-only drift mode), as a newly recorded
// version is.
func (s *Pass) Dispatching(e v1beta1.ManagedResource) bool {
	return s.Fresh || s.Flow.Dispatches(e.Step)
}

// HealthStep is the step an entry's health is judged in: its own when the
// version being kept runs its workflow step by step, else none.
func (s *Pass) HealthStep(e v1beta1.ManagedResource) string {
	if s.Flow == nil {
		return ""
	}
	return e.Step
}

// ByClusterAndStep groups entries by cluster and, when the version runs
// its workflow step by step, by step, in first-seen order.
func (s *Pass) ByClusterAndStep(entries []v1beta1.ManagedResource) []StepGroup {
	var out []StepGroup
	for _, g := range ByCluster(entries) {
		idx := map[string]int{}
		for _, e := range g.Entries {
			step := s.HealthStep(e)
			i, ok := idx[step]
			if !ok {
				i = len(out)
				idx[step] = i
				out = append(out, StepGroup{Cluster: g.Cluster, Step: step})
			}
			out[i].Entries = append(out[i].Entries, e)
		}
	}
	return out
}

// HasOwnTracker reports whether a tracker the pass loaded carries the
// Application's UID.
func (s *Pass) HasOwnTracker() bool {
	uid := string(s.App.UID)
	for _, rt := range []*v1beta1.ResourceTracker{s.Current, s.Root, s.Comprev} {
		if rt != nil && rt.Labels[v1beta1.LabelAppUID] == uid {
			return true
		}
	}
	for i := range s.Older {
		if s.Older[i].Labels[v1beta1.LabelAppUID] == uid {
			return true
		}
	}
	return false
}

// Merge adds a cluster's share to the pass.
func (s *Pass) Merge(p *ClusterShare) {
	s.Keep.Applied += p.Keep.Applied
	s.Keep.Gated += p.Keep.Gated
	s.Keep.Changes = append(s.Keep.Changes, p.Keep.Changes...)
	s.Keep.Failures = append(s.Keep.Failures, p.Keep.Failures...)
	s.Keep.Drifted = append(s.Keep.Drifted, p.Keep.Drifted...)
	s.Keep.Conflicts = append(s.Keep.Conflicts, p.Keep.Conflicts...)
	s.Keep.Unread = append(s.Keep.Unread, p.Keep.Unread...)
	for _, w := range p.Keep.Waiting {
		if !slices.Contains(s.Keep.Waiting, w) {
			s.Keep.Waiting = append(s.Keep.Waiting, w)
		}
	}
	for _, w := range p.Keep.UnhealthyDeps {
		if !slices.Contains(s.Keep.UnhealthyDeps, w) {
			s.Keep.UnhealthyDeps = append(s.Keep.UnhealthyDeps, w)
		}
	}
	for k, v := range p.Keep.Live {
		s.Keep.Remember(k, v)
	}
	s.GC.Deleted = append(s.GC.Deleted, p.GC.Deleted...)
	s.GC.Pending = append(s.GC.Pending, p.GC.Pending...)
	s.GC.Failures = append(s.GC.Failures, p.GC.Failures...)
	s.GC.LeftBehind = append(s.GC.LeftBehind, p.GC.LeftBehind...)
	if p.RetryErr != nil {
		s.SetRetry(p.RetryErr)
	}
}

// WorkflowRefusal is why the newest generation's workflow was refused
// (nothing of it applied), or why the kept version's recorded steps
// cannot run; nil otherwise.
func WorkflowRefusal(s *Pass) error {
	if s.FlowErr != nil {
		return s.FlowErr
	}
	if r := ReasonOf(s.RenderErr, ""); s.RenderErr != nil && (r == v1beta1.ReasonUnsupportedWorkflow || r == v1beta1.ReasonWorkflowFailed) {
		return s.RenderErr
	}
	if errors.As(s.RenderErr, new(*workflow.MissingDefinitionError)) {
		// A step type with no definition: the step at fault fails.
		return s.RenderErr
	}
	return nil
}

// ReportOnly reports whether the Application asks StateKeep to report
// drift without repairing it (annotation app.oam.dev/drift-mode=report).
func ReportOnly(app *v1beta1.Application) bool {
	return app.Annotations[v1beta1.AnnotationDriftMode] == v1beta1.DriftModeReport
}
