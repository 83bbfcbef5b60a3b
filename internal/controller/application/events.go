package application

import (
	"context"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/apply"
	"github.com/steward-oam/steward/internal/controller/application/decisionlog"
	"github.com/steward-oam/steward/internal/controller/application/facts"
	"github.com/steward-oam/steward/internal/controller/application/status"
	"github.com/steward-oam/steward/internal/tracker"
)

// applierFor returns the Applier of app's objects, by the configured
// method and with this replica's shard label.
func (r *Reconciler) applierFor(app *v1beta1.Application) apply.Applier {
	method, _ := apply.ParseMethod(r.Options.ApplyMethod) // validated with the flags
	return apply.Applier{Owner: apply.Owner{Name: app.Name, Namespace: app.Namespace}, Shard: r.Options.Sharding.Label(), Method: method}
}

// noteConflicts logs each field a server-side apply took from another
// field manager, counts it, and keeps it for the pass's warning event.
func (r *Reconciler) noteConflicts(ctx context.Context, p *facts.ClusterShare, key tracker.Key, res apply.Result) {
	for _, c := range res.Conflicts {
		decisionlog.For(ctx, key, decisionlog.Decision).Info("Took field from another field manager: the manifest sets it", "field", c.Field, "previousManager", c.Manager)
		r.Metrics.FieldTaken(key.Kind, c.Manager)
		p.Keep.Conflicts = append(p.Keep.Conflicts, facts.FieldConflict{Key: key, Conflict: c})
	}
}

// events is how the pass's events are recorded.
func (r *Reconciler) events() status.Events {
	return status.Events{Recorder: r.Recorder, Metrics: r.Metrics, FirstTime: r.Warned.FirstTime,
		DefinitionRevisions: r.Options.DefinitionRevisions, DeletionTimeout: r.Options.DeletionTimeout}
}
