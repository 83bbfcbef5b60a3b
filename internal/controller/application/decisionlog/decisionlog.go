package decisionlog

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/go-logr/logr"
	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/apply"
	"github.com/steward-oam/steward/internal/controller/application/facts"
	"github.com/steward-oam/steward/internal/tracker"
)

// Verbosity of decision logs. Every write Steward makes or refuses, and
// every object it leaves alone on purpose, is one line at Decision,
// with the application (from the reconcile logger), the object, its
// cluster and why; objects found as recorded are one line at
// Unchanged, so the default level logs nothing per unchanged object.
const (
	Decision  = 1
	Unchanged = 2
)

// For is the logger of a decision about one object.
func For(ctx context.Context, key tracker.Key, level int) logr.Logger {
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

// Applied logs what one apply did: created, configured (with the
// fields), drift left alone (report-only), or unchanged.
func Applied(ctx context.Context, key tracker.Key, component string, res apply.Result, fields []string) {
	switch res.Action {
	case apply.Created:
		For(ctx, key, Decision).Info("Created", "component", component)
	case apply.Configured:
		For(ctx, key, Decision).Info("Configured", "component", component, "fields", fields)
	case apply.Drifted, apply.Missing:
		For(ctx, key, Decision).Info("Skipped: drift reported, not repaired (report-only)", "component", component, "state", string(res.Action), "fields", fields)
	case apply.Skipped:
		For(ctx, key, Decision).Info("Skipped: not owned by this application", "component", component)
	default:
		For(ctx, key, Unchanged).Info("Unchanged", "component", component)
	}
}

// Deleted logs what one delete did, and why it was asked for.
func Deleted(ctx context.Context, key tracker.Key, component, why string, res apply.Result) {
	switch res.Action {
	case apply.Deleted:
		For(ctx, key, Decision).Info("Deleted", "component", component, "reason", why)
	case apply.Skipped:
		For(ctx, key, Decision).Info("Skipped delete: not owned by this application", "component", component, "reason", why)
	case apply.Terminating:
		For(ctx, key, Unchanged).Info("Waiting for deletion to finish", "component", component, "reason", why)
	default:
		For(ctx, key, Unchanged).Info("Already gone", "component", component, "reason", why)
	}
}

// Failed logs a failed write or read with its context. Failures repeat
// on every pass until fixed, so they log at Decision; the condition
// and event on the Application carry them at the default level.
func Failed(ctx context.Context, f facts.Failure) {
	For(ctx, f.Key, Decision).Info("Failed", "component", f.Component, "reason", f.Reason, "error", f.Err.Error())
}
