package apprev

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/apprevision"
	"github.com/steward-oam/steward/internal/controller/application/decisionlog"
	"github.com/steward-oam/steward/internal/controller/application/facts"
	"github.com/steward-oam/steward/internal/delivery"
	"github.com/steward-oam/steward/internal/tracker"
)

// NameFor names the revision of the version kind that renderAndRecord is
// about to record, when it records it in a new tracker, so that the tracker is created
// labelled with it rather than labelled by a second write. The revisions
// it lists are the ones Record then uses; a new Application's first
// version (firstVersion) is named without a list. "" when revisions are off or
// cannot be listed: Record then labels the tracker as it does one
// recorded without a name.
func (k *Keeper) NameFor(ctx context.Context, s *facts.Pass, kind tracker.Kind) string {
	name := tracker.Name(s.App.Name, s.App.Namespace, kind)
	if k == nil || !k.On || s.Deleting || (s.Current != nil && s.Current.Name == name) {
		// Off, or the version's tracker exists: it is not created.
		return ""
	}
	// The tracker about to be recorded, as it will be: the current one
	// becomes older.
	next := &v1beta1.ResourceTracker{Spec: v1beta1.ResourceTrackerSpec{ApplicationGeneration: s.App.Generation}}
	if kind.PublishVersion != "" {
		next.Annotations = map[string]string{v1beta1.AnnotationPublishVersion: kind.PublishVersion}
	}
	if firstVersion(s, kind) {
		// Named as an empty list would name it; Record checks the name by
		// creating the revision, and lists only when it is taken.
		s.Revisions.Named, s.Revisions.Unchecked = revisionName(s.App, nil, next, nil), true
		return s.Revisions.Named
	}
	revs, err := k.listOnce(ctx, s)
	if err != nil {
		return ""
	}
	older := slices.DeleteFunc(slices.Clone(s.Older), func(o v1beta1.ResourceTracker) bool { return o.Name == name })
	if s.Current != nil && s.Current.Name != name {
		older = append(older, *s.Current)
	}
	s.Revisions.Named = revisionName(s.App, older, next, revs)
	return s.Revisions.Named
}

// firstVersion reports whether the version about to be recorded is the
// first of a new Application: no tracker of its name (its own, an earlier
// Application's or KubeVela's), no revision in its status, no
// publishVersion (whose revision `vela up --revision` may have written).
// Its revision is named without a list.
func firstVersion(s *facts.Pass, kind tracker.Kind) bool {
	return !s.Revisions.RevisionsListed && kind.PublishVersion == "" && apprevision.PublishVersionOf(s.App) == "" &&
		s.App.Status.LatestRevision == nil && s.Current == nil && s.Root == nil && s.Comprev == nil &&
		len(s.Older) == 0 && len(s.KubeVelaRoots) == 0
}

// revisionName names the revision of version current: the revision of its
// publishVersion that no older tracker names (`vela up --revision` writes
// one before Steward sees the version), else the next number, and for an
// Application without publishVersion at least its generation, so that the
// revision's name is the one its objects are labelled with.
func revisionName(app *v1beta1.Application, older []v1beta1.ResourceTracker, current *v1beta1.ResourceTracker, revs []v1beta1.ApplicationRevision) string {
	taken := claimed(older, revs)
	if pv := apprevision.PublishVersionOf(app); pv != "" {
		if rev := apprevision.ForVersion(revs, pv); rev != nil && !taken[rev.Name] {
			return rev.Name
		}
	}
	latest := app.Status.LatestRevision
	if latest != nil && latest.Name == delivery.RevisionNameOf(app.Name, current.Annotations[v1beta1.AnnotationPublishVersion], current.Spec.ApplicationGeneration) {
		// The status names this very version the way Steward named it
		// before it wrote revisions: its number is free.
		latest = nil
	}
	n := apprevision.Next(latest, revs)
	if apprevision.PublishVersionOf(app) == "" {
		n = max(n, current.Spec.ApplicationGeneration)
	}
	return apprevision.NameOf(app.Name, n)
}

// claimed are the revision names trackers claim: a tracker claims the
// revision its label names only while the revision is of its version:
// `vela workflow rollback` deletes the revisions after the one it goes
// back to, and `vela up --revision` then writes one under a name such a
// tracker still carries.
func claimed(trackers []v1beta1.ResourceTracker, revs []v1beta1.ApplicationRevision) map[string]bool {
	out := map[string]bool{}
	for _, o := range trackers {
		if n := o.Labels[v1beta1.LabelAppRevision]; n != "" {
			if rev := findRevision(revs, n); rev == nil || ofVersion(rev, &o) {
				out[n] = true
			}
		}
	}
	return out
}

// ofVersion reports whether rev is a revision of rt's version: of its
// publishVersion (none for a generation's version).
func ofVersion(rev *v1beta1.ApplicationRevision, rt *v1beta1.ResourceTracker) bool {
	return apprevision.PublishVersionOf(rev) == rt.Annotations[v1beta1.AnnotationPublishVersion]
}

// nameAttempts bounds how many names createNamed tries: each one held by
// an object that is not the Application's moves the version past it.
const nameAttempts = 3

// createNamed creates the live version's revision under *name. A name
// held by a revision of the Application's own (one an earlier pass of
// this version wrote) gives that revision, held; a name held by anything
// else (an earlier Application's revision, or an object the list of this
// one's does not show, as when a first version was named without a list)
// is never written: the version takes the number past it and the
// highest listed, its tracker is labelled again, and *name is the name
// taken.
func (k *Keeper) createNamed(ctx context.Context, s *facts.Pass, defs apprevision.Definitions, name *string) (*v1beta1.ApplicationRevision, bool, error) {
	for attempt := 1; ; attempt++ {
		rev, err := k.create(ctx, s.App, defs, *name)
		if !apierrors.IsAlreadyExists(err) {
			if err != nil {
				return nil, false, fmt.Errorf("writing application revision %s: %w", *name, err)
			}
			return rev, false, nil
		}
		revs, err := k.listOnce(ctx, s)
		if err != nil {
			return nil, false, err
		}
		holder := findRevision(revs, *name)
		if holder == nil {
			holder = &v1beta1.ApplicationRevision{}
			if err := k.Reader.Get(ctx, client.ObjectKey{Namespace: s.App.Namespace, Name: *name}, holder); apierrors.IsNotFound(err) {
				holder = nil // deleted meanwhile: the name is tried again
			} else if err != nil {
				return nil, false, fmt.Errorf("reading application revision %s: %w", *name, err)
			}
		}
		if holder != nil && mine(holder, s.App) {
			return holder, true, nil
		}
		if attempt == nameAttempts {
			return nil, false, fmt.Errorf("application revision %s: %d names tried are held by objects that are not this Application's revisions", *name, nameAttempts)
		}
		if holder != nil {
			if *name, err = k.skipName(ctx, s, *name, revs); err != nil {
				return nil, false, err
			}
		}
	}
}

// skipName moves the live version past name, which an object that is not
// the Application's revision holds: to the number past it and past the
// highest of revs and status.latestRevision, its tracker labelled with
// the name returned.
func (k *Keeper) skipName(ctx context.Context, s *facts.Pass, taken string, revs []v1beta1.ApplicationRevision) (string, error) {
	n, _ := apprevision.NumberOf(taken)
	name := apprevision.NameOf(s.App.Name, max(n+1, apprevision.Next(s.App.Status.LatestRevision, revs)))
	ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info("Skipped an application revision name held by an object that is not this Application's revision", "applicationRevision", taken, "instead", name)
	return name, k.labelTracker(ctx, s, name)
}

// create writes revision name of app.
func (k *Keeper) create(ctx context.Context, app *v1beta1.Application, defs apprevision.Definitions, name string) (*v1beta1.ApplicationRevision, error) {
	n, _ := apprevision.NumberOf(name)
	rev, err := apprevision.Build(app, defs, n)
	if err != nil {
		return nil, err
	}
	rev.Name = name
	if err := apprevision.Encode(rev, revisionCompression); err != nil {
		return nil, err
	}
	return rev, k.Client.Create(ctx, rev)
}

// labelTracker labels the live version's tracker with its revision's
// name, as KubeVela labels its trackers (`vela workflow rollback` finds a
// revision's tracker by it).
func (k *Keeper) labelTracker(ctx context.Context, s *facts.Pass, name string) error {
	before := s.Current.DeepCopy()
	patch := client.MergeFrom(before)
	if s.Current.Labels == nil {
		s.Current.Labels = map[string]string{}
	}
	s.Current.Labels[v1beta1.LabelAppRevision] = name
	if err := k.Client.Patch(ctx, s.Current, patch); err != nil {
		s.Current.Labels = before.Labels // the status names what the tracker says
		return fmt.Errorf("labelling resource tracker %s with its revision: %w", s.Current.Name, err)
	}
	ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info("Labelled the version's resource tracker with its application revision", "resourceTracker", s.Current.Name, "applicationRevision", name)
	return nil
}

// unlabelOlder takes the name from an older tracker left with it (its
// revision was deleted, and the name written again): a name finds one
// tracker.
func (k *Keeper) unlabelOlder(ctx context.Context, s *facts.Pass, name string) error {
	for i := range s.Older {
		o := &s.Older[i]
		if o.Labels[v1beta1.LabelAppRevision] != name {
			continue
		}
		patch := client.MergeFrom(o.DeepCopy())
		delete(o.Labels, v1beta1.LabelAppRevision)
		if err := k.Client.Patch(ctx, o, patch); err != nil {
			return fmt.Errorf("unlabelling resource tracker %s: %w", o.Name, err)
		}
		ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info("Unlabelled an older resource tracker: its application revision's name is the live version's", "resourceTracker", o.Name, "applicationRevision", name)
	}
	return nil
}
