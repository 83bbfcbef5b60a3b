package application

import (
	"context"
	"time"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/application/decisionlog"
	"github.com/steward-oam/steward/internal/controller/application/facts"
	"github.com/steward-oam/steward/internal/controller/application/record"
	"github.com/steward-oam/steward/internal/controller/definition"
	"github.com/steward-oam/steward/internal/tracker"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// recordComponentRevisions adds a revision to the component-revision
// tracker for each component whose rendered objects changed (order and
// hashes, from record.ComponentHashes), keeping the newest
// --application-revision-limit revisions of each component. The entries
// are records only: nothing is applied or deleted for them. A first
// version (first) writes none: its tracker's mark holds them, and the
// second version's starts the tracker from that mark.
func (r *Reconciler) recordComponentRevisions(ctx context.Context, s *facts.Pass, order []string, hashes map[string]string, first bool) error {
	ref := tracker.RefOf(s.App)
	rt := s.Comprev
	if rt != nil && rt.Labels[v1beta1.LabelAppUID] != ref.UID {
		// Left by an earlier Application of the same name: its history is
		// not this one's.
		if err := r.Trackers.Delete(ctx, rt); err != nil {
			return err
		}
		rt, s.Comprev = nil, nil
	}
	if rt == nil && first {
		return nil
	}
	var existing []v1beta1.ManagedResource
	if rt != nil {
		var err error
		if existing, err = tracker.Entries(rt); err != nil {
			return err
		}
	} else {
		existing = record.MarkedComponentRevisions(record.MarkedVersion(s))
	}
	out, changed := record.NextComponentRevisions(existing, order, hashes, s.App.Generation, r.revisionLimit())
	if !changed && rt != nil {
		return nil
	}
	if rt == nil {
		if len(out) == 0 {
			return nil
		}
		// Written from the first version's mark: at the generation of its
		// newest revision, as if written with it.
		gen := s.App.Generation
		if !changed {
			gen = record.NewestGeneration(out)
		}
		rec, err := r.Trackers.Record(ctx, ref, tracker.ComponentRevision(), gen, out, tracker.DeleteMissing, nil)
		if err == nil {
			s.Comprev = rec
		}
		return err
	}
	return r.Trackers.Save(ctx, rt, out, s.App.Generation)
}

// revisionLimit is how many revisions of each component are kept.
func (r *Reconciler) revisionLimit() int { return max(r.Options.RevisionLimit, 1) }

// autoUpdateDelay gathers the definition changes of one `kubectl apply`
// (many definitions at once) into one render of each Application.
const autoUpdateDelay = 3 * time.Second

// autoUpdate reports whether app renders again when its definitions change.
func (r *Reconciler) autoUpdate(app *v1beta1.Application) bool {
	return r.Options.DefinitionRevisions && app.Annotations[v1beta1.AnnotationAutoUpdate] == "true"
}

// definitionsFingerprint is the tracker.AnnotationDefinitions mark of the version
// being recorded: "" unless the Application is autoUpdate.
func (r *Reconciler) definitionsFingerprint(ctx context.Context, s *facts.Pass) string {
	if !r.autoUpdate(s.App) {
		return ""
	}
	fp, err := r.resolver().Fingerprint(ctx, s.App)
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Reading the definitions' fingerprint failed; the next pass renders again")
		return ""
	}
	return fp
}

// definitionsMoved reports whether a definition an autoUpdate Application
// uses (and does not pin) changed since its version was rendered: the
// version is then rendered again. Applications without the annotation
// keep the version they rendered until their spec changes, as in KubeVela;
// a pinned type's revision never changes.
func (r *Reconciler) definitionsMoved(ctx context.Context, s *facts.Pass) bool {
	if !r.autoUpdate(s.App) || s.Current == nil {
		return false
	}
	fp, err := r.resolver().Fingerprint(ctx, s.App)
	if err != nil || fp == tracker.Mark(s.Current, tracker.AnnotationDefinitions) {
		return false
	}
	ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info("Rendering the version again: a definition it uses changed (app.oam.dev/autoUpdate)", "resourceTracker", s.Current.Name)
	return true
}

// autoUpdateHandler enqueues, autoUpdateDelay after a definition of kind t
// is created, changed or deleted, the autoUpdate Applications that use it
// in its namespace (any namespace for the system namespace's), found
// through IndexAutoUpdate: a change costs the Applications that use it.
func (r *Reconciler) autoUpdateHandler(t v1beta1.DefinitionType) handler.TypedEventHandler[client.Object, reconcile.Request] {
	enqueue := func(ctx context.Context, def client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		opts := []client.ListOption{client.MatchingFields{definition.IndexAutoUpdate: string(t) + "/" + def.GetName()}, client.UnsafeDisableDeepCopy}
		if def.GetNamespace() != r.Options.SystemDefinitionNS {
			opts = append(opts, client.InNamespace(def.GetNamespace()))
		}
		var apps v1beta1.ApplicationList
		if err := r.Client.List(ctx, &apps, opts...); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Listing the autoUpdate Applications of a changed definition failed", "definition", def.GetName())
			return
		}
		for i := range apps.Items {
			q.AddAfter(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&apps.Items[i])}, autoUpdateDelay)
		}
	}
	return handler.TypedFuncs[client.Object, reconcile.Request]{
		CreateFunc: func(ctx context.Context, e event.TypedCreateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, e.Object, q)
		},
		UpdateFunc: func(ctx context.Context, e event.TypedUpdateEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, e.ObjectNew, q)
		},
		DeleteFunc: func(ctx context.Context, e event.TypedDeleteEvent[client.Object], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			enqueue(ctx, e.Object, q)
		},
	}
}
