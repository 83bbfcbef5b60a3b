package application

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-logr/logr"
	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/apply"
	"github.com/steward-oam/steward/internal/tracker"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
)

// emitEvents records events for what really changed in this pass: objects
// created, patched or deleted, and transitions of Ready. A pass that
// changed nothing emits nothing.
func (r *Reconciler) emitEvents(s *scope, before *v1beta1.Application) {
	if r.Recorder == nil {
		return
	}
	if s.deleting {
		r.emitDeletionEvents(s)
		return
	}
	app := s.app
	if len(s.keep.changes) > 0 {
		reason, verb := v1beta1.EventDriftRepaired, "repaired drift of"
		if s.fresh || len(s.flow.Dispatching()) > 0 {
			reason, verb = v1beta1.EventApplied, "applied"
		}
		r.Recorder.Eventf(app, nil, corev1.EventTypeNormal, reason, "Apply", "%s %s", verb, describeChanges(s.keep.changes))
		if !s.fresh && len(s.flow.Dispatching()) == 0 {
			for _, c := range s.keep.changes {
				r.Metrics.DriftRepaired(c.Key.Kind)
			}
		}
	}
	for _, c := range s.gc.deleted {
		r.Metrics.GCDeleted(c.Key.Kind)
	}
	if s.rolledBack && s.current != nil {
		r.Recorder.Eventf(app, nil, corev1.EventTypeNormal, v1beta1.EventRolledBack, "Rollback", "rolled back to %s: its recorded manifests are applied again", liveRevision(app, s.current).Name)
	}
	if len(s.takenOver) > 0 {
		r.Recorder.Eventf(app, nil, corev1.EventTypeNormal, v1beta1.EventTakenOverFromKubeVela, "Reconcile",
			"took over from KubeVela: %s", strings.Join(s.takenOver, "; "))
	}
	if len(s.recreated) > 0 {
		r.Recorder.Eventf(app, nil, corev1.EventTypeWarning, v1beta1.EventResourceTrackerRecreated, "Reconcile",
			"re-created resource trackers deleted by hand, with what they listed: %s", strings.Join(s.recreated, ", "))
	}
	if len(s.gc.leftBehind) > 0 {
		r.Recorder.Eventf(app, nil, corev1.EventTypeWarning, v1beta1.EventLeftBehind, "Delete",
			"left in place because their cluster is no longer registered: %s", keysString(s.gc.leftBehind, failureListLimit))
	}
	if len(s.gc.deleted) > 0 {
		r.Recorder.Eventf(app, nil, corev1.EventTypeNormal, v1beta1.EventGarbageCollected, "Delete", "deleted %s", describeChanges(s.gc.deleted))
	}
	if w := unsupportedFeatures(app, r.Options.DefinitionRevisions); w != "" && r.warned.firstTime(app.Namespace+"/"+app.Name+"#features", w) {
		r.Recorder.Eventf(app, nil, corev1.EventTypeWarning, v1beta1.EventUnsupportedFeature, "Reconcile", "%s", w)
	}
	if w := describeConflicts(s.keep.conflicts); w != "" && r.warned.firstTime(app.Namespace+"/"+app.Name+"#conflicts", w) {
		r.Recorder.Eventf(app, nil, corev1.EventTypeWarning, v1beta1.EventFieldsTaken, "Apply", "%s", w)
	}
	if s.intervalWarning != "" && r.warned.firstTime(app.Namespace+"/"+app.Name, s.intervalWarning) {
		r.Recorder.Eventf(app, nil, corev1.EventTypeWarning, v1beta1.EventInvalidReconcileInterval, "Reconcile", "%s", s.intervalWarning)
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

// describeConflicts renders "took spec.replicas of Deployment default/web
// from kubectl-edit (the manifest sets it)"; "" for none.
func describeConflicts(cs []fieldConflict) string {
	if len(cs) == 0 {
		return ""
	}
	parts := make([]string, 0, min(len(cs), failureListLimit+1))
	for i, c := range cs {
		if i == failureListLimit {
			parts = append(parts, fmt.Sprintf("and %d more", len(cs)-failureListLimit))
			break
		}
		parts = append(parts, fmt.Sprintf("%s of %s from %q", c.Field, c.key, c.Manager))
	}
	return "took fields other field managers had set, because the manifest sets them: " + strings.Join(parts, ", ")
}

// describeChanges renders "created Deployment default/web, configured
// Service default/web".
func describeChanges(cs []objectChange) string {
	parts := make([]string, 0, min(len(cs), failureListLimit+1))
	for i, c := range cs {
		if i == failureListLimit {
			parts = append(parts, fmt.Sprintf("and %d more", len(cs)-failureListLimit))
			break
		}
		part := fmt.Sprintf("%s (%s)", c.Key, c.Action)
		if len(c.Fields) > 0 {
			part = fmt.Sprintf("%s (%s: %s)", c.Key, c.Action, strings.Join(c.Fields, ", "))
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, ", ")
}

// emitDeletionEvents records what a deletion pass could not do: an
// identity that cannot be used, deletes that failed (retried), objects
// given up in unreachable clusters.
func (r *Reconciler) emitDeletionEvents(s *scope) {
	if r.Recorder == nil {
		return
	}
	app := s.app
	switch {
	case s.identityErr != nil:
		r.Recorder.Eventf(app, nil, corev1.EventTypeWarning, v1beta1.ReasonInvalidServiceAccount, "Delete", "%v; nothing is deleted until it is fixed", s.identityErr)
	case s.deletionRetried:
		r.Recorder.Eventf(app, nil, corev1.EventTypeWarning, v1beta1.ReasonDeleteFailed, "Delete", "%s; the objects stay recorded and deletion is retried", describeFailures(s.gc.failures, 3))
	case s.deletionGaveUp:
		r.Recorder.Eventf(app, nil, corev1.EventTypeWarning, v1beta1.ReasonDeleteFailed, "Delete",
			"gave up after %s on objects in unreachable clusters, left behind: %s", r.Options.DeletionTimeout, describeFailures(s.gc.failures, 10))
	}
}

// unsupportedFeatures names the KubeVela features an Application uses
// that Steward does not carry and that change nothing it delivers, so
// that none is ignored silently; "" when there are none. Features that
// would change what is delivered are refused instead (see
// docs/compatibility.md).
func unsupportedFeatures(app *v1beta1.Application, revisions bool) string {
	var out []string
	if _, ok := app.Annotations[v1beta1.AnnotationAutoUpdate]; ok && !revisions {
		out = append(out, "annotation app.oam.dev/autoUpdate is not carried out: definition revisions are turned off (--definition-revisions=false), and changed definitions are rendered only when the Application's spec changes")
	}
	for _, c := range app.Spec.Components {
		if len(c.Scopes) > 0 {
			out = append(out, fmt.Sprintf("component %q: scopes are ignored (KubeVela's health scopes are not carried; health comes from each definition's health policy)", c.Name))
			break
		}
	}
	return strings.Join(out, "; ")
}

// Verbosity of decision logs. Every write Steward makes or refuses, and
// every object it leaves alone on purpose, is one line at decisionLevel,
// with the application (from the reconcile logger), the object, its
// cluster and why; objects found as recorded are one line at
// unchangedLevel, so the default level logs nothing per unchanged object.
const (
	decisionLevel  = 1
	unchangedLevel = 2
)

// decisionLog is the logger of a decision about one object.
func decisionLog(ctx context.Context, key tracker.Key, level int) logr.Logger {
	name := key.Cluster
	if name == "" {
		name = v1beta1.ClusterLocal
	}
	log := ctrl.LoggerFrom(ctx).V(level)
	if !log.Enabled() {
		// A re-sync logs a decision for every object it skips; below the
		// log's verbosity, adding the values would be work for nothing.
		return log
	}
	obj := key
	obj.Cluster = ""
	return log.WithValues("object", obj.String(), "cluster", name)
}

// logApplied logs what one apply did: created, configured (with the
// fields), drift left alone (report-only), or unchanged.
func logApplied(ctx context.Context, key tracker.Key, component string, res apply.Result, fields []string) {
	switch res.Action {
	case apply.Created:
		decisionLog(ctx, key, decisionLevel).Info("Created", "component", component)
	case apply.Configured:
		decisionLog(ctx, key, decisionLevel).Info("Configured", "component", component, "fields", fields)
	case apply.Drifted, apply.Missing:
		decisionLog(ctx, key, decisionLevel).Info("Skipped: drift reported, not repaired (report-only)", "component", component, "state", string(res.Action), "fields", fields)
	case apply.Skipped:
		decisionLog(ctx, key, decisionLevel).Info("Skipped: not owned by this application", "component", component)
	default:
		decisionLog(ctx, key, unchangedLevel).Info("Unchanged", "component", component)
	}
}

// logDeleted logs what one delete did, and why it was asked for.
func logDeleted(ctx context.Context, key tracker.Key, component, why string, res apply.Result) {
	switch res.Action {
	case apply.Deleted:
		decisionLog(ctx, key, decisionLevel).Info("Deleted", "component", component, "reason", why)
	case apply.Skipped:
		decisionLog(ctx, key, decisionLevel).Info("Skipped delete: not owned by this application", "component", component, "reason", why)
	case apply.Terminating:
		decisionLog(ctx, key, unchangedLevel).Info("Waiting for deletion to finish", "component", component, "reason", why)
	default:
		decisionLog(ctx, key, unchangedLevel).Info("Already gone", "component", component, "reason", why)
	}
}

// logFailed logs a failed write or read with its context. Failures repeat
// on every pass until fixed, so they log at decisionLevel; the condition
// and event on the Application carry them at the default level.
func logFailed(ctx context.Context, f objectFailure) {
	decisionLog(ctx, f.Key, decisionLevel).Info("Failed", "component", f.Component, "reason", f.Reason, "error", f.Err.Error())
}

// applierFor returns the Applier of app's objects, by the configured
// method and with this replica's shard label.
func (r *Reconciler) applierFor(app *v1beta1.Application) apply.Applier {
	method, _ := apply.ParseMethod(r.Options.ApplyMethod) // validated with the flags
	return apply.Applier{Owner: apply.Owner{Name: app.Name, Namespace: app.Namespace}, Shard: r.Options.Sharding.Label(), Method: method}
}

// noteConflicts logs each field a server-side apply took from another
// field manager, counts it, and keeps it for the pass's warning event.
func (r *Reconciler) noteConflicts(ctx context.Context, p *clusterShare, key tracker.Key, res apply.Result) {
	for _, c := range res.Conflicts {
		decisionLog(ctx, key, decisionLevel).Info("Took field from another field manager: the manifest sets it", "field", c.Field, "previousManager", c.Manager)
		r.Metrics.FieldTaken(key.Kind, c.Manager)
		p.keep.conflicts = append(p.keep.conflicts, fieldConflict{key: key, Conflict: c})
	}
}
