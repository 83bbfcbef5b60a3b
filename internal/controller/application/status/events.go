package status

import (
	"strings"
	"time"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/application/facts"
	"github.com/steward-oam/steward/internal/metrics"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
)

// Events records the events of a pass on its Application.
type Events struct {
	Recorder recorder.EventRecorder
	// Metrics counts repaired drift and collected objects; nil counts
	// nothing.
	Metrics *metrics.Metrics
	// FirstTime reports whether a warning (by key and message) is new, so
	// that each is emitted once.
	FirstTime func(key, msg string) bool
	// DefinitionRevisions and DeletionTimeout are the reconciler's
	// settings the events name.
	DefinitionRevisions bool
	DeletionTimeout     time.Duration
}

// Emit records events for what really changed in this pass: objects
// created, patched or deleted, and transitions of Ready. A pass that
// changed nothing emits nothing.
func (r Events) Emit(s *facts.Pass, before *v1beta1.Application) {
	if r.Recorder == nil {
		return
	}
	if s.Deleting {
		r.EmitDeletion(s)
		return
	}
	app := s.App
	if len(s.Keep.Changes) > 0 {
		reason, verb := v1beta1.EventDriftRepaired, "repaired drift of"
		if s.Fresh || len(s.Flow.Dispatching()) > 0 {
			reason, verb = v1beta1.EventApplied, "applied"
		}
		r.Recorder.Eventf(app, nil, corev1.EventTypeNormal, reason, "Apply", "%s %s", verb, DescribeChanges(s.Keep.Changes))
		if !s.Fresh && len(s.Flow.Dispatching()) == 0 {
			for _, c := range s.Keep.Changes {
				r.Metrics.DriftRepaired(c.Key.Kind)
			}
		}
	}
	for _, c := range s.GC.Deleted {
		r.Metrics.GCDeleted(c.Key.Kind)
	}
	if s.RolledBack && s.Current != nil {
		r.Recorder.Eventf(app, nil, corev1.EventTypeNormal, v1beta1.EventRolledBack, "Rollback", "rolled back to %s: its recorded manifests are applied again", LiveRevision(app, s.Current).Name)
	}
	if s.Revisions.Unwritten != "" {
		r.Recorder.Eventf(app, nil, corev1.EventTypeWarning, v1beta1.EventApplicationRevisionNotWritten, "Record",
			"application revision %s is not written: %s", s.Revisions.Unwritten, s.Revisions.UnwrittenWhy)
	}
	if len(s.TakenOver) > 0 {
		r.Recorder.Eventf(app, nil, corev1.EventTypeNormal, v1beta1.EventTakenOverFromKubeVela, "Reconcile",
			"took over from KubeVela: %s", strings.Join(s.TakenOver, "; "))
	}
	if len(s.Recreated) > 0 {
		r.Recorder.Eventf(app, nil, corev1.EventTypeWarning, v1beta1.EventResourceTrackerRecreated, "Reconcile",
			"re-created resource trackers deleted by hand, with what they listed: %s", strings.Join(s.Recreated, ", "))
	}
	if len(s.GC.LeftBehind) > 0 {
		r.Recorder.Eventf(app, nil, corev1.EventTypeWarning, v1beta1.EventLeftBehind, "Delete",
			"left in place because their cluster is no longer registered: %s", KeysString(s.GC.LeftBehind, FailureListLimit))
	}
	if len(s.GC.Deleted) > 0 {
		r.Recorder.Eventf(app, nil, corev1.EventTypeNormal, v1beta1.EventGarbageCollected, "Delete", "deleted %s", DescribeChanges(s.GC.Deleted))
	}
	if w := UnsupportedFeatures(app, r.DefinitionRevisions); w != "" && r.FirstTime(app.Namespace+"/"+app.Name+"#features", w) {
		r.Recorder.Eventf(app, nil, corev1.EventTypeWarning, v1beta1.EventUnsupportedFeature, "Reconcile", "%s", w)
	}
	if w := DescribeConflicts(s.Keep.Conflicts); w != "" && r.FirstTime(app.Namespace+"/"+app.Name+"#conflicts", w) {
		r.Recorder.Eventf(app, nil, corev1.EventTypeWarning, v1beta1.EventFieldsTaken, "Apply", "%s", w)
	}
	if s.IntervalWarning != "" && r.FirstTime(app.Namespace+"/"+app.Name, s.IntervalWarning) {
		r.Recorder.Eventf(app, nil, corev1.EventTypeWarning, v1beta1.EventInvalidReconcileInterval, "Reconcile", "%s", s.IntervalWarning)
	}
	// A delete that failed (refused, typically) does not make the
	// Application unready, so Ready says nothing of it: its own warning
	// does, once per change of the message.
	wasGC := v1beta1.FindCondition(before.Status.Conditions, v1beta1.ConditionGarbageCollected)
	nowGC := v1beta1.FindCondition(app.Status.Conditions, v1beta1.ConditionGarbageCollected)
	if nowGC != nil && nowGC.Reason == v1beta1.ReasonDeleteFailed && (wasGC == nil || wasGC.Message != nowGC.Message) {
		r.Recorder.Eventf(app, nil, corev1.EventTypeWarning, v1beta1.ReasonDeleteFailed, "Delete", "%s", nowGC.Message)
	}
	was := v1beta1.FindCondition(before.Status.Conditions, v1beta1.ConditionReady)
	now := v1beta1.FindCondition(app.Status.Conditions, v1beta1.ConditionReady)
	if now == nil || (was != nil && was.Status == now.Status && was.Reason == now.Reason && was.Message == now.Message) {
		return
	}
	if now.Status == "True" {
		r.Recorder.Eventf(app, nil, corev1.EventTypeNormal, v1beta1.EventReady, "Reconcile", "%s", now.Message)
		return
	}
	r.Recorder.Eventf(app, nil, corev1.EventTypeWarning, now.Reason, "Reconcile", "%s", now.Message)
}

// EmitDeletion records what a deletion pass could not do: an
// identity that cannot be used, deletes that failed (retried), objects
// given up in unreachable clusters.
func (r Events) EmitDeletion(s *facts.Pass) {
	if r.Recorder == nil {
		return
	}
	app := s.App
	switch {
	case s.IdentityErr != nil:
		r.Recorder.Eventf(app, nil, corev1.EventTypeWarning, v1beta1.ReasonInvalidServiceAccount, "Delete", "%v; nothing is deleted until it is fixed", s.IdentityErr)
	case s.DeletionRetried:
		r.Recorder.Eventf(app, nil, corev1.EventTypeWarning, v1beta1.ReasonDeleteFailed, "Delete", "%s; the objects stay recorded and deletion is retried", DescribeFailures(s.GC.Failures, 3))
	case s.DeletionGaveUp:
		r.Recorder.Eventf(app, nil, corev1.EventTypeWarning, v1beta1.ReasonDeleteFailed, "Delete",
			"gave up after %s on objects in unreachable clusters, left behind: %s", r.DeletionTimeout, DescribeFailures(s.GC.Failures, 10))
	}
}
