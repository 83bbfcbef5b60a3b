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
	"github.com/steward-oam/steward/internal/tracker"
	"github.com/steward-oam/steward/internal/workflow"
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
	if rev := findRevision(revs, name); s.RolledBack && rev != nil && mine(rev, s.App) && !ofVersion(rev, s.Current) {
		// The label of the version rolled back to names another
		// publishVersion's revision (`vela workflow rollback` deleted its
		// own, `vela up --revision` wrote one under the name): the version
		// is named again, and the tracker that revision is of keeps it.
		name = ""
	}
	if name == "" {
		// Labelled even when no revision is written for it (unwritable),
		// so that later passes find the status naming it and ask nothing.
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
	if why := unwritable(s, live); why != "" {
		ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info("Skipped: the application revision is not written", "applicationRevision", name, "reason", why)
		s.Revisions.Unwritten, s.Revisions.UnwrittenWhy = name, why
	} else if revs, name, err = k.write(ctx, s, revs, name, live); err != nil {
		s.Revisions.Failed = name
		s.SetRetry(err)
		return nil
	}
	if prev := s.App.Status.LatestRevision; prev != nil && prev.Name != name {
		if old := findRevision(revs, prev.Name); old != nil && mine(old, s.App) {
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
	// A revision goes with its version's tracker: one a tracker still
	// names (kept past the limit while it records an object waiting for
	// deletion or one a rule keeps) is what a rollback to it takes up.
	tracked := claimed(append(slices.Clone(s.Older), *s.Current), revs)
	// Revisions another Application owns are neither counted nor deleted.
	for _, n := range apprevision.Trim(deletableOf(revs, s.App), name, tracked, k.limit(s)) {
		old := findRevision(revs, n)
		if err := k.Client.Delete(ctx, old, client.Preconditions{UID: &old.UID}); err != nil && !apierrors.IsNotFound(err) {
			s.SetRetry(fmt.Errorf("deleting application revision %s: %w", n, err))
			continue
		}
		ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info("Deleted an application revision past the limit", "applicationRevision", n, "reason", "RevisionLimit")
	}
	return nil
}

// write creates the live version's revision name, or takes up live, the
// Application's own revision of that name (nil: none), recording its
// definitions again when they were dropped; it returns the revisions with
// the one created, and the name taken (createNamed may move past a held
// one).
func (k *Keeper) write(ctx context.Context, s *facts.Pass, revs []v1beta1.ApplicationRevision, name string, live *v1beta1.ApplicationRevision) ([]v1beta1.ApplicationRevision, string, error) {
	if live != nil {
		changed, err := k.refill(ctx, s.App, live)
		if err != nil {
			// The revision stays as it is; the rest of Record goes on.
			ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info("Skipped: the definitions of the application revision live again are not recorded", "applicationRevision", name, "error", err.Error())
			return revs, name, nil
		}
		if changed {
			if err := k.Client.Update(ctx, live); err != nil {
				return revs, name, fmt.Errorf("writing application revision %s: %w", name, err)
			}
			ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info("Recorded the definitions in the application revision live again", "applicationRevision", name)
			s.Revisions.Written = live
		}
		return revs, name, nil
	}
	defs, err := k.definitions(ctx, s.App)
	if err != nil {
		return revs, name, err
	}
	rev, held, err := k.createNamed(ctx, s, defs, &name)
	if s.Revisions.RevisionsListed {
		revs = s.Revisions.Listed // listed when a name was held
	}
	switch {
	case err != nil:
		return revs, name, err
	case held:
		// Written by an earlier pass of this version that did not get to
		// the status: it is the version's.
		ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info("Skipped: the application revision exists", "applicationRevision", name)
	default:
		ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info("Created an application revision", "applicationRevision", name)
		revs = append(revs, *rev)
	}
	s.Revisions.Written = rev
	return revs, name, nil
}

// unwritable says why the live version's revision can be neither taken
// up (live, the revision of its name) nor written, "" when it can. A
// revision is written from the Application as it is now, so only for a
// version rendered from the spec as it is now: after a rollback, or a
// spec edited under the same publishVersion (which keeps the version as
// recorded), a revision written now would record the wrong spec. live is
// the Application's own revision of the version's name, or nil.
func unwritable(s *facts.Pass, live *v1beta1.ApplicationRevision) string {
	if live != nil {
		return "" // the Application's own, of the version's publishVersion on a rollback (Record)
	}
	digest := tracker.Mark(s.Current, tracker.AnnotationSpecDigest)
	switch {
	case digest != "" && digest != workflow.SpecDigest(s.App):
		return "the version has no revision, and the Application's spec is not the one it was rendered from"
	case digest == "" && s.RolledBack:
		return "the version rolled back to has no revision, and was recorded before trackers carried a digest of the spec they were rendered from"
	}
	return ""
}

// DeleteWith deletes the revision that rt, a tracker of the
// Application's own recycled past the limit, names: a revision goes with
// its version's tracker (Record keeps it while the tracker is kept). One
// that is not the Application's, or the live version's, is left.
func (k *Keeper) DeleteWith(ctx context.Context, s *facts.Pass, rt *v1beta1.ResourceTracker) error {
	name := rt.Labels[v1beta1.LabelAppRevision]
	if k == nil || !k.On || name == "" || (s.Current != nil && s.Current.Labels[v1beta1.LabelAppRevision] == name) {
		return nil
	}
	for _, o := range s.Older {
		if o.Name != rt.Name && o.Labels[v1beta1.LabelAppRevision] == name {
			return nil // another tracker kept names it
		}
	}
	// Read by name: a steady pass lists no revisions.
	rev := &v1beta1.ApplicationRevision{}
	if err := k.Reader.Get(ctx, client.ObjectKey{Namespace: s.App.Namespace, Name: name}, rev); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("reading application revision %s: %w", name, err)
	}
	if !mine(rev, s.App) || !ofVersion(rev, rt) {
		return nil
	}
	if err := k.Client.Delete(ctx, rev, client.Preconditions{UID: &rev.UID}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting application revision %s: %w", name, err)
	}
	ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info("Deleted an application revision with its version's resource tracker", "applicationRevision", name, "resourceTracker", rt.Name, "reason", "RevisionLimit")
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
	revs = deletableOf(revs, app)
	var errs []error
	for i := range revs {
		if err := k.Client.Delete(ctx, &revs[i], client.Preconditions{UID: &revs[i].UID}); err != nil && !apierrors.IsNotFound(err) {
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

// refill records the definitions again in rev, a revision Thin made
// superseded that is live again: those of the spec rev records (the
// version's), found as the render finds them, not those of the spec as it
// is now, which a rollback by publishVersion does not render.
func (k *Keeper) refill(ctx context.Context, app *v1beta1.Application, rev *v1beta1.ApplicationRevision) (bool, error) {
	if _, thin := rev.Annotations[apprevision.AnnotationDefinitionsDropped]; !thin {
		return false, nil
	}
	fields, err := apprevision.Decode(rev)
	if err != nil {
		return false, err
	}
	version := app.DeepCopy()
	version.Spec = fields.Application.Spec
	defs, err := k.definitions(ctx, version)
	if err != nil {
		return false, err
	}
	return apprevision.Refill(rev, defs, revisionCompression)
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

// deletable reports whether Steward may delete rev for app: one of app's
// own, or one an earlier Application of the same name left (owned by an
// Application of app's name and another UID: that Application is gone,
// since app holds the name, and the garbage collector, where one runs,
// takes it too). A revision another Application owns, labelled with app's
// name or not, is never deleted.
func deletable(rev *v1beta1.ApplicationRevision, app *v1beta1.Application) bool {
	if mine(rev, app) {
		return true
	}
	for _, o := range rev.OwnerReferences {
		if o.Kind == "Application" && o.Name == app.Name && o.UID != app.UID {
			return true
		}
	}
	return false
}

// deletableOf are the revisions of revs deletable for app.
func deletableOf(revs []v1beta1.ApplicationRevision, app *v1beta1.Application) []v1beta1.ApplicationRevision {
	var out []v1beta1.ApplicationRevision
	for i := range revs {
		if deletable(&revs[i], app) {
			out = append(out, revs[i])
		}
	}
	return out
}

func findRevision(revs []v1beta1.ApplicationRevision, name string) *v1beta1.ApplicationRevision {
	for i := range revs {
		if revs[i].Name == name {
			return &revs[i]
		}
	}
	return nil
}
