package controller

import (
	"context"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/apply"
	"github.com/steward-oam/steward/internal/tracker"
)

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
func (r *ApplicationReconciler) applierFor(app *v1beta1.Application) apply.Applier {
	method, _ := apply.ParseMethod(r.Options.ApplyMethod) // validated with the flags
	return apply.Applier{Owner: apply.Owner{Name: app.Name, Namespace: app.Namespace}, Shard: r.Options.Sharding.Label(), Method: method}
}

// noteConflicts logs each field a server-side apply took from another
// field manager, counts it, and keeps it for the pass's warning event.
func (r *ApplicationReconciler) noteConflicts(ctx context.Context, p *clusterShare, key tracker.Key, res apply.Result) {
	for _, c := range res.Conflicts {
		decisionLog(ctx, key, decisionLevel).Info("Took field from another field manager: the manifest sets it", "field", c.Field, "previousManager", c.Manager)
		r.Metrics.FieldTaken(key.Kind, c.Manager)
		p.keep.conflicts = append(p.keep.conflicts, fieldConflict{key: key, Conflict: c})
	}
}
