package application

import (
	"errors"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/apply"
	"github.com/steward-oam/steward/internal/boundary"
	"github.com/steward-oam/steward/internal/cluster"
	"github.com/steward-oam/steward/internal/egress"
	"github.com/steward-oam/steward/internal/helm/release"
	"github.com/steward-oam/steward/internal/policy"
	"github.com/steward-oam/steward/internal/render"
	"github.com/steward-oam/steward/internal/tracker"
	"github.com/steward-oam/steward/internal/workflow"
)

// scope carries one reconcile pass of one Application. Phases only record
// facts here; computeStatus turns the facts into status and conditions.
type scope struct {
	app *v1beta1.Application

	identityFacts
	trackerSet
	takeover
	policies
	renderReport
	healthReport
	passState

	// stepRecorded is true when a custom workflow step recorded objects
	// in this pass: the next pass applies them at once.
	stepRecorded bool
	// run is the pass's workflow run of the version kept, whatever its
	// kind (advanceWorkflow): the one writer of status.workflow; nil
	// without a version. flow is run when it is gated (its steps decide
	// what the pass applies), nil for any other workflow. flowErr is why
	// a gated workflow cannot run.
	run     *workflow.Run
	flow    *workflow.Run
	flowErr error
	keep    keepReport
	gc      gcReport
}

// identityFacts is who the pass acts as.
type identityFacts struct {
	// identity is the ServiceAccount the Application acts as; zero for
	// Steward's own.
	identity cluster.Identity
	// clients reach the clusters as identity: every request for the
	// Application's objects goes through them.
	clients cluster.Clients
	// identityErr is why the identity cannot be used; nothing is applied
	// or deleted while it is set.
	identityErr error
}

// trackerSet is the Application's trackers as loadTrackers found them.
type trackerSet struct {
	// current is the versioned tracker being kept: the one of the
	// Application's generation once recorded, else the newest earlier one.
	current *v1beta1.ResourceTracker
	// root records resources whose lifetime is the Application's.
	root *v1beta1.ResourceTracker
	// comprev records the revisions of each component.
	comprev *v1beta1.ResourceTracker
	// older are the versioned trackers before current, oldest first,
	// including trackers left by an earlier Application of the same name,
	// and the versioned and component-revision trackers KubeVela left.
	older []v1beta1.ResourceTracker
	// kubevelaRoots are the root trackers KubeVela left: what they list
	// is adopted into root before they are deleted.
	kubevelaRoots []v1beta1.ResourceTracker
	// newestGeneration is the highest generation any of this Application's
	// versioned trackers was applied at.
	newestGeneration int64
	// rolledBack is true when an earlier publishVersion became current.
	rolledBack bool
	// readFresh is true when trackers were just moved into this shard:
	// the cache may not show them yet, so the pass lists them from the
	// API server.
	readFresh bool
	// recreated names the trackers someone deleted by hand that this pass
	// re-created.
	recreated []string
}

// takeover is what the pass took over of what KubeVela left.
type takeover struct {
	// takenOver notes what the pass took over or removed of what KubeVela
	// left, for the TakenOverFromKubeVela event.
	takenOver []string
	// droppedConditions are KubeVela's condition types the status no
	// longer carries.
	droppedConditions []string
}

// policies are the Application's resource policies.
type policies struct {
	// rules are the resource policies of the Application.
	rules *policy.Rules
	// rulesErr is why the policies could not be read.
	rulesErr error
}

// renderReport is what renderAndRecord found and did.
type renderReport struct {
	// releases are the Helm releases this pass's render prepared.
	releases []*helmRelease
	// renderErr is why the current generation could not be rendered.
	renderErr error
	// recordErr is why the rendered objects could not be recorded.
	recordErr error
	// guarded is true when this pass confirmed, before it recorded, that
	// the Application had no tracker of its own yet and was still there:
	// if it is gone at the end, the pass cleans up (see cleanUpVanished, finalize.go).
	guarded bool
	// fresh is true when current was recorded in this pass, so applied
	// changes are a dispatch rather than drift being repaired.
	fresh bool
	// newKeys are objects of a freshly recorded version that no tracker
	// listed before: they are created without being read first.
	newKeys map[tracker.Key]bool
	// rendered says, for a version rendered in this pass whose workflow
	// steps take inputs, which of them were rendered and with what.
	rendered *renderedInputs
	// refill names the steps of the version kept that this pass renders
	// again, for the values they take.
	refill map[string]bool
	// parallelism is the smallest parallelism the deploy steps of a
	// version rendered in this pass set; 0 for none.
	parallelism int
}

// healthReport is what evaluateHealth found, for dispatchPostTraits and status.
type healthReport struct {
	// workloads are the workload entries health found, per placement,
	// and defs the definitions it resolved: dispatchPostTraits reuses them.
	workloads []placedWorkload
	defs      render.Definitions
	// health is each component's health, from the live objects.
	health map[string]componentHealth
	// postRecorded is true when PostDispatch traits recorded objects in
	// this pass: the next pass, at once, applies them.
	postRecorded bool
}

// passState is how the pass went: stopped early, deleting, retried, written.
type passState struct {
	// fullRead is true when watch mode reads every object this pass
	// instead of trusting its cache (--watch-full-read-period).
	fullRead bool
	// finalizerAdded is true when this pass added Steward's finalizer:
	// the Application may have been deleted as it was (see cleanUpVanished, finalize.go).
	finalizerAdded bool
	// statusWritten is true once the pass wrote its status: a deletion
	// writes it before it removes the finalizer, not at the pass's end.
	statusWritten bool
	// statusErr is what that write returned.
	statusErr error
	// aborted is true when a phase stopped the pass early: the status is
	// left as it is.
	aborted bool
	// deleting is true for a pass that deletes the Application's objects
	// (finalize); deletionRetried when deletes failed and are retried,
	// deletionGaveUp when objects in unreachable clusters were given up.
	deleting        bool
	deletionRetried bool
	deletionGaveUp  bool
	// retryErr is returned from Reconcile so that the work queue retries
	// with back-off; set for failures that may pass by themselves.
	retryErr error
	// intervalWarning explains an ignored reconcile-interval annotation.
	intervalWarning string
}

// reasonError carries the condition reason of an error that is not a
// render error.
type reasonError struct {
	reason string
	err    error
}

func (e *reasonError) Error() string { return e.err.Error() }
func (e *reasonError) Unwrap() error { return e.err }

// reasonOf returns the condition reason carried by err, or fallback.
func reasonOf(err error, fallback string) string {
	var re *render.Error
	if errors.As(err, &re) && re.Reason != "" {
		return re.Reason
	}
	var oe *reasonError
	if errors.As(err, &oe) {
		return oe.reason
	}
	if be := boundary.As(err); be != nil {
		return be.Reason
	}
	if egress.IsDenied(err) {
		return egress.Reason
	}
	if errors.Is(err, release.ErrForeignRelease) {
		return v1beta1.ReasonOwnershipConflict
	}
	return fallback
}

func newScope(app *v1beta1.Application) *scope { return &scope{app: app} }

// objectChange is one object a pass created, patched or deleted.
type objectChange struct {
	Key    tracker.Key
	Action apply.Action
	// Fields are the fields a patch changed, for drift reports.
	Fields []string
}

// objectFailure is one object a pass could not apply or delete.
type objectFailure struct {
	Key       tracker.Key
	Component string
	Reason    string
	Err       error
}

// keepReport is what applying the current tracker did.
type keepReport struct {
	// ran is true when there was a tracker to keep.
	ran      bool
	applied  int
	changes  []objectChange
	failures []objectFailure
	// waiting lists components skipped because a dependency failed, or,
	// when dispatched, is not healthy yet.
	waiting []string
	// unhealthyDeps says, for the Dispatched condition, which
	// dependencies the waiting components wait to become healthy.
	unhealthyDeps []string
	// gated counts objects of workflow steps not reached yet.
	gated int
	// live are the objects as read or written in this pass, for health.
	live map[tracker.Key]*unstructured.Unstructured
	// drifted are the objects report-only mode found drifted.
	drifted []objectChange
	// conflicts are the fields taken from other field managers.
	conflicts []fieldConflict
	// unread are objects watch mode found unchanged and did not read;
	// health reads them only when it must evaluate their component again.
	unread []unreadObject
}

// fieldConflict is a field of an object Steward took from another field
// manager.
type fieldConflict struct {
	key tracker.Key
	apply.Conflict
}

// unreadObject is an object watch mode did not read, at the
// resourceVersion the watch cache has.
type unreadObject struct {
	key             tracker.Key
	resourceVersion string
}

// gcReport is what garbage collection did.
type gcReport struct {
	deleted  []objectChange
	pending  []tracker.Key
	failures []objectFailure
	// skipped is true when the current version is not fully applied, so
	// nothing was collected.
	skipped bool
	// leftBehind are objects in clusters that are no longer registered,
	// dropped from the trackers without being deleted.
	leftBehind []tracker.Key
}

// setRetry remembers the first transient error of the pass.
func (s *scope) setRetry(err error) {
	if s.retryErr == nil {
		s.retryErr = err
	}
}
