package apprev

import (
	"context"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/apprevision"
	"github.com/steward-oam/steward/internal/controller/application/decisionlog"
	"github.com/steward-oam/steward/internal/controller/application/facts"
	"github.com/steward-oam/steward/internal/controller/application/status"
	"github.com/steward-oam/steward/internal/definition"
	"github.com/steward-oam/steward/internal/delivery"
	"github.com/steward-oam/steward/internal/tracker"
)

// +kubebuilder:rbac:groups=core.oam.dev,resources=applicationrevisions,verbs=get;list;create;update;patch;delete
// +kubebuilder:rbac:groups=core.oam.dev,resources=applicationrevisions/status,verbs=get;update;patch

// Keeper writes an Application's ApplicationRevisions for the
// reconciler's passes. It never caches them: Reader is the API server.
type Keeper struct {
	// On is --application-revisions; off, every method does nothing.
	On bool
	// Client writes revisions and labels trackers; Reader lists and reads
	// revisions (uncached).
	Client client.Client
	Reader client.Reader
	// Resolver finds the definitions a revision records.
	Resolver definition.Resolver
	// Limit is --application-revision-limit.
	Limit int
}

// revisionCompression is how ApplicationRevisions are stored: gzip came
// out smaller than zstd for them (docs/benchmarks.md), and KubeVela's
// clients decode both.
const revisionCompression = v1beta1.CompressionGzip

// Record gives the live version its ApplicationRevision (KubeVela's
// record of a version, what `vela revision list`, `live-diff` and
// `workflow rollback` read) and labels the version's tracker with its
// name (app.oam.dev/appRevision), which status.latestRevision then
// names. It costs no request while the live version stays the one the
// status names. A new live revision takes the definitions; the one it
// supersedes drops them (apprevision.Thin), and revisions past the limit
// go, oldest first, never the live one.
func (k *Keeper) Record(ctx context.Context, s *facts.Pass) error {
	if k == nil || !k.On || s.Current == nil || s.Deleting {
		return nil
	}
	name := s.Current.Labels[v1beta1.LabelAppRevision]
	if name != "" && !(s.Fresh && name == s.Revisions.Named) && !s.RolledBack && s.App.Status.LatestRevision != nil && s.App.Status.LatestRevision.Name == name {
		return nil
	}
	// A first version's name, not checked against a list, is checked by
	// its create (createNamed).
	var revs []v1beta1.ApplicationRevision
	var err error
	if !(s.Revisions.Unchecked && name == s.Revisions.Named) {
		if revs, err = k.listOnce(ctx, s); err != nil {
			s.SetRetry(err)
			return nil
		}
	}
	if name == "" {
		name = revisionName(s.App, s.Older, s.Current, revs)
		err = k.labelTracker(ctx, s, name)
	}
	if err == nil {
		err = k.unlabelOlder(ctx, s, name)
	}
	if err != nil {
		s.SetRetry(err)
		return nil
	}
	defs, err := k.definitions(ctx, s.App)
	if err != nil {
		s.SetRetry(err)
		return nil
	}
	live := findRevision(revs, name)
	if live != nil && !mine(live, s.App) {
		// An earlier Application of the same name left it (and the
		// tracker that named it): the version takes the next number.
		if name, err = k.skipName(ctx, s, name, revs); err != nil {
			s.SetRetry(err)
			return nil
		}
		live = nil
	}
	if live == nil {
		rev, held, err := k.createNamed(ctx, s, defs, &name)
		if s.Revisions.RevisionsListed {
			revs = s.Revisions.Listed // listed when a name was held
		}
		switch {
		case err != nil:
			s.SetRetry(err)
			return nil
		case held:
			// Written by an earlier pass of this version that did not get
			// to the status: it is the version's.
			ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info("Skipped: the application revision exists", "applicationRevision", name)
			s.Revisions.Written = rev
		default:
			ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info("Created an application revision", "applicationRevision", name)
			revs = append(revs, *rev)
			s.Revisions.Written = rev
		}
	} else if changed, err := apprevision.Refill(live, defs, revisionCompression); err != nil || changed {
		if err == nil {
			err = k.Client.Update(ctx, live)
		}
		if err != nil {
			s.SetRetry(fmt.Errorf("writing application revision %s: %w", name, err))
			return nil
		}
		ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info("Recorded the definitions in the application revision live again", "applicationRevision", name)
		s.Revisions.Written = live
	}
	if prev := s.App.Status.LatestRevision; prev != nil && prev.Name != name {
		if old := findRevision(revs, prev.Name); old != nil {
			if changed, err := apprevision.Thin(old, revisionCompression); err != nil || changed {
				if err == nil {
					err = k.Client.Update(ctx, old)
				}
				if err != nil && !apierrors.IsNotFound(err) {
					s.SetRetry(fmt.Errorf("writing application revision %s: %w", old.Name, err))
				} else if err == nil {
					ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info("Dropped the definitions from a superseded application revision", "applicationRevision", old.Name)
				}
			}
		}
	}
	for _, n := range apprevision.Beyond(revs, map[string]bool{name: true}, k.limit(s)) {
		old := findRevision(revs, n)
		if err := k.Client.Delete(ctx, old); err != nil && !apierrors.IsNotFound(err) {
			s.SetRetry(fmt.Errorf("deleting application revision %s: %w", n, err))
			continue
		}
		ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info("Deleted an application revision past the limit", "applicationRevision", n, "reason", "RevisionLimit")
	}
	return nil
}

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
	// An older tracker claims a revision only while the revision is of its
	// version: `vela workflow rollback` deletes the revisions after the one
	// it goes back to, and `vela up --revision` then writes one under a
	// name such a tracker still carries.
	claimed := map[string]bool{}
	for _, o := range older {
		if n := o.Labels[v1beta1.LabelAppRevision]; n != "" {
			if rev := findRevision(revs, n); rev == nil || apprevision.PublishVersionOf(rev) == o.Annotations[v1beta1.AnnotationPublishVersion] {
				claimed[n] = true
			}
		}
	}
	if pv := apprevision.PublishVersionOf(app); pv != "" {
		if rev := apprevision.ForVersion(revs, pv); rev != nil && !claimed[rev.Name] {
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

// Outcome writes how the live revision's workflow stands into its
// status (succeeded, status.workflow), when the pass changed the phase,
// the workflow or the live revision; computeStatus has run.
func (k *Keeper) Outcome(ctx context.Context, s *facts.Pass, before *v1beta1.Application) {
	if k == nil || !k.On || s.Deleting || s.Current == nil {
		return
	}
	name := s.Current.Labels[v1beta1.LabelAppRevision]
	if name == "" {
		return
	}
	// A version recorded or rolled back to in this pass is written even
	// when the status names its revision already (`vela up --revision`
	// writes the revision, and the status, under the name the version
	// before had).
	if !s.Fresh && !s.RolledBack && before.Status.LatestRevision != nil && before.Status.LatestRevision.Name == name &&
		before.Status.Phase == s.App.Status.Phase && status.Same(before.Status.Workflow, s.App.Status.Workflow) {
		return
	}
	rev := s.Revisions.Written
	if rev == nil || rev.Name != name {
		// Not written in this pass: read as it stands.
		rev = &v1beta1.ApplicationRevision{}
		if err := k.Reader.Get(ctx, client.ObjectKey{Namespace: s.App.Namespace, Name: name}, rev); err != nil {
			ctrl.LoggerFrom(ctx).V(1).Info("Application revision not read for its status", "applicationRevision", name, "error", err.Error())
			return
		}
	}
	if !mine(rev, s.App) {
		ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info("Skipped: the application revision is not this Application's", "applicationRevision", name)
		return
	}
	o := apprevision.OutcomeOf(s.App, name, metav1.Now())
	if !o.Apply(rev) {
		return
	}
	err := k.Client.Status().Update(ctx, rev)
	if apierrors.IsConflict(err) && rev == s.Revisions.Written {
		// Written meanwhile: over the revision as it stands, once.
		if err = k.Reader.Get(ctx, client.ObjectKeyFromObject(rev), rev); err == nil && o.Apply(rev) {
			err = k.Client.Status().Update(ctx, rev)
		}
	}
	if err != nil {
		ctrl.LoggerFrom(ctx).V(1).Info("Application revision status not written", "applicationRevision", name, "error", err.Error())
		return
	}
	ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info("Recorded the application revision's workflow", "applicationRevision", name, "phase", o.Status.Phase, "succeeded", o.Succeeded)
}

// Delete deletes the Application's revisions with it (its finalizer
// does; the owner reference lets the garbage collector take any left).
func (k *Keeper) Delete(ctx context.Context, app *v1beta1.Application) error {
	if k == nil || !k.On {
		return nil
	}
	revs, err := k.list(ctx, app)
	if err != nil {
		return err
	}
	var errs []error
	for i := range revs {
		if err := k.Client.Delete(ctx, &revs[i]); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting application revision %s: %w", revs[i].Name, err))
			continue
		}
		ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info("Deleted an application revision with its Application", "applicationRevision", revs[i].Name)
	}
	return errors.Join(errs...)
}

// listOnce lists the Application's revisions the first time a pass asks
// for them, and gives the same list after.
func (k *Keeper) listOnce(ctx context.Context, s *facts.Pass) ([]v1beta1.ApplicationRevision, error) {
	if !s.Revisions.RevisionsListed {
		revs, err := k.list(ctx, s.App)
		if err != nil {
			return nil, err
		}
		s.Revisions.Listed, s.Revisions.RevisionsListed = revs, true
	}
	return s.Revisions.Listed, nil
}

// list lists the Application's revisions from the API server:
// they are never cached (a cache of every revision is what makes
// KubeVela's controller and LISTs heavy), and are read only when the live
// version changes.
func (k *Keeper) list(ctx context.Context, app *v1beta1.Application) ([]v1beta1.ApplicationRevision, error) {
	list := &v1beta1.ApplicationRevisionList{}
	if err := k.Reader.List(ctx, list, client.InNamespace(app.Namespace), client.MatchingLabels{v1beta1.LabelAppName: app.Name}); err != nil {
		return nil, fmt.Errorf("listing application revisions: %w", err)
	}
	return list.Items, nil
}

// definitions are the definitions the Application uses, as a revision
// records them: found as the render finds them.
func (k *Keeper) definitions(ctx context.Context, app *v1beta1.Application) (apprevision.Definitions, error) {
	defs, err := k.Resolver.Resolve(ctx, app)
	if err != nil {
		return apprevision.Definitions{}, err
	}
	out := apprevision.Definitions{Components: defs.Components, Traits: defs.Traits, Policies: defs.Policies}
	if steps, err := k.Resolver.Steps(ctx, app); err == nil {
		out.Steps = steps
	}
	return out, nil
}

// limit is --application-revision-limit, or the garbage-collect
// policy's applicationRevisionLimit.
func (k *Keeper) limit(s *facts.Pass) int {
	if limit := s.Rules.GC.ApplicationRevisionLimit; limit != nil && *limit >= 0 {
		return *limit
	}
	return k.Limit
}

// mine reports whether rev is one of app's revisions, the only ones
// written: owned by app, or owned by no Application and labelled with
// app's name (as `vela up --revision` may write one). One owned by
// another Application (an earlier one of the same name left it), or
// neither owned nor labelled, is never written.
func mine(rev *v1beta1.ApplicationRevision, app *v1beta1.Application) bool {
	owned := false
	for _, o := range rev.OwnerReferences {
		if o.Kind == "Application" {
			if o.UID == app.UID {
				return true
			}
			owned = true
		}
	}
	return !owned && rev.Labels[v1beta1.LabelAppName] == app.Name
}

func findRevision(revs []v1beta1.ApplicationRevision, name string) *v1beta1.ApplicationRevision {
	for i := range revs {
		if revs[i].Name == name {
			return &revs[i]
		}
	}
	return nil
}
