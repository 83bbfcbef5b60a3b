package application

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/apprevision"
	"github.com/steward-oam/steward/internal/tracker"
)

// appRevisions lists an Application's ApplicationRevisions, oldest first.
func appRevisions(t *testing.T, ns, app string) []v1beta1.ApplicationRevision {
	t.Helper()
	var list v1beta1.ApplicationRevisionList
	if err := testClient.List(context.Background(), &list, client.InNamespace(ns), client.MatchingLabels{v1beta1.LabelAppName: app}); err != nil {
		t.Fatal(err)
	}
	return apprevision.Sorted(list.Items)
}

func revisionNames(revs []v1beta1.ApplicationRevision) string {
	var names []string
	for _, r := range revs {
		names = append(names, r.Name)
	}
	return strings.Join(names, ",")
}

// waitRevisions waits until the Application's revisions are want (names,
// oldest first) and the status names the last one.
func waitRevisions(t *testing.T, ns, app string, want ...string) []v1beta1.ApplicationRevision {
	t.Helper()
	var revs []v1beta1.ApplicationRevision
	eventually(t, 30*time.Second, "revisions "+strings.Join(want, ","), func() error {
		revs = appRevisions(t, ns, app)
		latest := getApp(t, ns, app).Status.LatestRevision
		if revisionNames(revs) != strings.Join(want, ",") || latest == nil || latest.Name != want[len(want)-1] {
			return fmt.Errorf("revisions %s, latestRevision %+v", revisionNames(revs), latest)
		}
		return nil
	})
	return revs
}

// waitSucceeded waits until revision name records a succeeded workflow.
func waitSucceeded(t *testing.T, ns, name string) *v1beta1.ApplicationRevision {
	t.Helper()
	rev := &v1beta1.ApplicationRevision{}
	eventually(t, 30*time.Second, name+" succeeded", func() error {
		if err := testClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, rev); err != nil {
			return err
		}
		if !rev.Status.Succeeded || rev.Status.Workflow == nil || rev.Status.Workflow.Phase != apprevision.PhaseSucceeded {
			return fmt.Errorf("status %+v", rev.Status)
		}
		return nil
	})
	return rev
}

// Two versions give two revisions in KubeVela's shape: <app>-v<N>, the
// Application's spec and the definitions it used (compressed, decoded
// whole), succeeded once delivered; the superseded one keeps the spec but
// not the definitions, and each version's tracker names its revision.
func TestAppRevision_TwoVersionsListed(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	createApp(t, ns, "metadata: {name: web}\nspec:"+indent(v1Spec))
	waitReady(t, ns, "web")
	waitRevisions(t, ns, "web", "web-v1")
	v1 := waitSucceeded(t, ns, "web-v1")
	fields, err := apprevision.Decode(v1)
	if err != nil {
		t.Fatal(err)
	}
	if v1.Spec.Compression.Type == "" || fields.ComponentDefinitions["test-worker"] == nil || fields.TraitDefinitions["test-service"] == nil ||
		fields.Application.Spec.Components[0].Type != "test-worker" || v1.Labels[v1beta1.LabelAppRevisionHash] == "" {
		t.Errorf("web-v1: compression %q, fields %+v, labels %v", v1.Spec.Compression.Type, fields, v1.Labels)
	}

	setSpec(t, ns, "web", v2Spec, nil)
	revs := waitRevisions(t, ns, "web", "web-v1", "web-v2")
	waitSucceeded(t, ns, "web-v2")
	eventually(t, 20*time.Second, "web-v1 without its definitions", func() error {
		old := &v1beta1.ApplicationRevision{}
		if err := testClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "web-v1"}, old); err != nil {
			return err
		}
		f, err := apprevision.Decode(old)
		if err != nil {
			return err
		}
		if f.ComponentDefinitions != nil || old.Annotations[apprevision.AnnotationDefinitionsDropped] == "" || f.Application.Spec.Components[0].Traits == nil {
			return fmt.Errorf("web-v1: %+v, annotations %v", f, old.Annotations)
		}
		return nil
	})
	labels := map[string]bool{}
	for _, rt := range trackersOf(t, ns, "web") {
		if n := rt.Labels[v1beta1.LabelAppRevision]; n != "" {
			labels[n] = true
		}
	}
	if !labels["web-v2"] {
		t.Errorf("no tracker labelled web-v2: %v (revisions %s)", labels, revisionNames(revs))
	}
}

// limitedTo starts the controller with --application-revision-limit
// limit, for a new namespace.
func limitedTo(t *testing.T, limit int) string {
	t.Helper()
	ns := newNamespace(t)
	opts := testOptions()
	opts.RevisionLimit = limit
	startManager(t, testCfg, opts)
	return ns
}

// The limit keeps that many revisions besides the live one; the oldest go.
func TestAppRevision_LimitPrunes(t *testing.T) {
	ns := limitedTo(t, 1)
	createApp(t, ns, "metadata: {name: web}\nspec:"+indent(v1Spec))
	waitRevisions(t, ns, "web", "web-v1")
	setSpec(t, ns, "web", v2Spec, nil)
	waitRevisions(t, ns, "web", "web-v1", "web-v2")
	setSpec(t, ns, "web", v1Spec, nil)
	waitRevisions(t, ns, "web", "web-v2", "web-v3")
}

// Deleting the Application deletes its revisions (without relying on the
// garbage collector, which envtest does not run).
func TestAppRevision_DeletedWithTheApplication(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	app := createApp(t, ns, "metadata: {name: web}\nspec:"+indent(v1Spec))
	waitRevisions(t, ns, "web", "web-v1")
	setSpec(t, ns, "web", v2Spec, nil)
	waitRevisions(t, ns, "web", "web-v1", "web-v2")
	if err := testClient.Delete(context.Background(), app); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "revisions gone", func() error {
		if revs := appRevisions(t, ns, "web"); len(revs) > 0 {
			return fmt.Errorf("left: %s", revisionNames(revs))
		}
		return nil
	})
}

// A rollback by publishVersion takes up the earlier version's revision
// again: the status names it, it has its definitions back, and it records
// the rolled-back run's success; no revision is written for it anew.
func TestAppRevision_RollbackByPublishVersion(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	createApp(t, ns, "metadata: {name: web, annotations: {app.oam.dev/publishVersion: alpha}}\nspec:"+indent(v1Spec))
	waitRevisions(t, ns, "web", "web-v1")
	waitSucceeded(t, ns, "web-v1")
	setSpec(t, ns, "web", v2Spec, map[string]string{v1beta1.AnnotationPublishVersion: "beta"})
	waitRevisions(t, ns, "web", "web-v1", "web-v2")
	waitSucceeded(t, ns, "web-v2")

	setSpec(t, ns, "web", v2Spec, map[string]string{v1beta1.AnnotationPublishVersion: "alpha"})
	eventually(t, 30*time.Second, "web-v1 live again", func() error {
		latest := getApp(t, ns, "web").Status.LatestRevision
		if latest == nil || latest.Name != "web-v1" || !serviceExists(t, ns, "web") {
			return fmt.Errorf("latestRevision %+v, service %v", latest, serviceExists(t, ns, "web"))
		}
		return nil
	})
	revs := appRevisions(t, ns, "web")
	if revisionNames(revs) != "web-v1,web-v2" {
		t.Errorf("revisions %s, want web-v1,web-v2 (the rollback writes none)", revisionNames(revs))
	}
	v1 := waitSucceeded(t, ns, "web-v1")
	if apprevision.PublishVersionOf(v1) != "alpha" {
		t.Errorf("web-v1 publishVersion %q", apprevision.PublishVersionOf(v1))
	}
	eventually(t, 20*time.Second, "web-v1 whole, web-v2 without definitions", func() error {
		var whole, thin []string
		for _, r := range appRevisions(t, ns, "web") {
			f, err := apprevision.Decode(&r)
			if err != nil {
				return err
			}
			if f.ComponentDefinitions != nil {
				whole = append(whole, r.Name)
			} else {
				thin = append(thin, r.Name)
			}
		}
		if !slices.Equal(whole, []string{"web-v1"}) || !slices.Equal(thin, []string{"web-v2"}) {
			return fmt.Errorf("whole %v, thin %v", whole, thin)
		}
		return nil
	})
	// The definitions recorded again are those of the spec web-v1 records
	// (v1's, with the test-service trait), not those of the spec as it is
	// now, which the rollback does not render.
	v1 = waitSucceeded(t, ns, "web-v1")
	if f, err := apprevision.Decode(v1); err != nil || f.TraitDefinitions["test-service"] == nil {
		t.Errorf("web-v1 after the rollback: trait definitions %v (%v), want v1's test-service", f.TraitDefinitions, err)
	}
}

// Off by flag, Steward writes none.
func TestAppRevision_Off(t *testing.T) {
	ns := newNamespace(t)
	opts := testOptions()
	opts.ApplicationRevisions = false
	startManager(t, testCfg, opts)
	createApp(t, ns, "metadata: {name: web}\nspec:"+indent(v1Spec))
	waitReady(t, ns, "web")
	time.Sleep(3 * time.Second)
	if revs := appRevisions(t, ns, "web"); len(revs) > 0 {
		t.Errorf("revisions written with --application-revisions=false: %s", revisionNames(revs))
	}
	if latest := getApp(t, ns, "web").Status.LatestRevision; latest == nil || latest.Name != "web-v1" {
		t.Errorf("latestRevision %+v", latest)
	}
}

// publishedTwice delivers web under publishVersion alpha (v1Spec), then
// beta (v2Spec), and waits for their revisions web-v1 and web-v2.
func publishedTwice(t *testing.T) string {
	t.Helper()
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	createApp(t, ns, "metadata: {name: web, annotations: {app.oam.dev/publishVersion: alpha}}\nspec:"+indent(v1Spec))
	waitRevisions(t, ns, "web", "web-v1")
	setSpec(t, ns, "web", v2Spec, map[string]string{v1beta1.AnnotationPublishVersion: "beta"})
	waitRevisions(t, ns, "web", "web-v1", "web-v2")
	return ns
}

// `vela up --revision web-v1 --publish-version delta` after `vela workflow
// rollback` (which deletes the revisions after the one it goes back to):
// KubeVela's CLI freezes the Application, gives it web-v1's spec under
// publishVersion delta, writes the next revision itself under a name an
// older tracker still carries, and unfreezes. Steward takes that revision
// up as the live one, writes none of its own, and the older tracker gives
// the name up, so a name finds one tracker.
func TestAppRevision_UpWithRevisionTakesUpTheRevisionTheCLIWrote(t *testing.T) {
	ns := publishedTwice(t)
	ctx := context.Background()
	waitSucceeded(t, ns, "web-v2")

	// What the CLI does, in its order.
	v2 := &v1beta1.ApplicationRevision{}
	if err := testClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-v2"}, v2); err != nil {
		t.Fatal(err)
	}
	if err := testClient.Delete(ctx, v2); err != nil { // the rollback's clean-up
		t.Fatal(err)
	}
	setSpec(t, ns, "web", v1Spec, map[string]string{v1beta1.AnnotationControllerRequirement: "Disabled", v1beta1.AnnotationPublishVersion: "delta"})
	v1 := &v1beta1.ApplicationRevision{}
	if err := testClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-v1"}, v1); err != nil {
		t.Fatal(err)
	}
	written := v1.DeepCopy()
	written.ObjectMeta = metav1.ObjectMeta{Name: "web-v2", Namespace: ns, Labels: v1.Labels, Annotations: map[string]string{v1beta1.AnnotationPublishVersion: "delta"}, OwnerReferences: v1.OwnerReferences}
	written.Status = v1beta1.ApplicationRevisionStatus{}
	if err := testClient.Create(ctx, written); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "unfrozen", func() error {
		app := getApp(t, ns, "web")
		delete(app.Annotations, v1beta1.AnnotationControllerRequirement)
		return testClient.Update(ctx, app)
	})

	waitRevisions(t, ns, "web", "web-v1", "web-v2")
	waitSucceeded(t, ns, "web-v2")
	eventually(t, 20*time.Second, "web-v2 names the delta tracker only", func() error {
		var rts v1beta1.ResourceTrackerList
		if err := testClient.List(ctx, &rts, client.MatchingLabels{v1beta1.LabelAppName: "web", v1beta1.LabelAppNamespace: ns, v1beta1.LabelAppRevision: "web-v2"}); err != nil {
			return err
		}
		if len(rts.Items) != 1 || rts.Items[0].Annotations[v1beta1.AnnotationPublishVersion] != "delta" {
			var names []string
			for _, rt := range rts.Items {
				names = append(names, rt.Name)
			}
			return fmt.Errorf("trackers labelled web-v2: %v", names)
		}
		return nil
	})
	if revs := appRevisions(t, ns, "web"); revisionNames(revs) != "web-v1,web-v2" {
		t.Errorf("revisions %s, want web-v1,web-v2: Steward wrote its own", revisionNames(revs))
	}
}

// A version's revision costs no request beyond its own: the version's
// tracker is created labelled with it (one write more, the end of its
// dispatch, not two), and the revision's status is written over the revision
// the pass created rather than read back.
func TestAppRevision_RecordedWithoutExtraRequests(t *testing.T) {
	ns := newNamespace(t)
	log := &requestLog{}
	startManager(t, log.wrap(testCfg), testOptions())
	revisions := "GET /apis/core.oam.dev/v1beta1/namespaces/" + ns + "/applicationrevisions"
	for i, spec := range []string{v1Spec, v2Spec} {
		gen := int64(i + 1)
		name := fmt.Sprintf("web-v%d", gen)
		rt := tracker.Name("web", ns, tracker.Versioned(gen))
		if i == 0 {
			createApp(t, ns, "metadata: {name: web}\nspec:"+indent(spec))
			waitRevisions(t, ns, "web", name)
		} else {
			setSpec(t, ns, "web", spec, nil)
			waitRevisions(t, ns, "web", "web-v1", name)
		}
		waitSucceeded(t, ns, name)
		if got := revisionLabel(t, ns, rt); got != name {
			t.Errorf("tracker %s labelled %q, want %s", rt, got, name)
		}
		if n := log.count("PATCH /apis/core.oam.dev/v1beta1/resourcetrackers/" + rt + "?"); n > 1 {
			t.Errorf("version %d: its tracker was patched %d times, want at most once (its dispatch)", gen, n)
		}
		if n := log.count(revisions + "/" + name + "?"); n > 0 {
			t.Errorf("version %d: its revision was read back %d times", gen, n)
		}
	}
}

// A new Application's first version names its revision without listing
// revisions: its create is the check. The old code listed them once.
func TestAppRevision_FirstVersionNamedWithoutAList(t *testing.T) {
	ns, log := deliverLogged(t)
	revisions := "GET /apis/core.oam.dev/v1beta1/namespaces/" + ns + "/applicationrevisions?"
	if n := log.count(revisions); n > 0 {
		t.Errorf("the first version listed the revisions %d times, want none", n)
	}
	if got := revisionLabel(t, ns, tracker.Name("web", ns, tracker.Versioned(1))); got != "web-v1" {
		t.Errorf("the version's tracker is labelled %q, want web-v1", got)
	}
}

// The name a new Application's first version takes without a list is
// already held, with no tracker of the Application's name left. Held by
// an earlier Application's revision, or by objects the list of this
// Application's revisions does not show (no app.oam.dev/name label, no
// owner), the version takes the next free number, and what held the name
// is never written. Held by a revision of this very Application (an
// earlier pass wrote it, and the tracker that names it is not seen), it
// is the version's: no second revision is written.
func TestAppRevision_FirstVersionPastATakenName(t *testing.T) {
	for _, tc := range []struct {
		name   string
		held   []string // revision names held before the Application is delivered
		hidden bool     // unlabelled and unowned
		own    bool     // owned by the Application itself
		want   string   // the version's revision
	}{
		{name: "earlier application's", held: []string{"web-v1"}, want: "web-v2"},
		{name: "unlabelled, unowned", held: []string{"web-v1"}, hidden: true, want: "web-v2"},
		{name: "two unlabelled, unowned", held: []string{"web-v1", "web-v2"}, hidden: true, want: "web-v3"},
		{name: "its own", held: []string{"web-v1"}, own: true, want: "web-v1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := newNamespace(t)
			ctx := context.Background()
			owner := &v1beta1.Application{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, UID: "0ld-uid"}}
			if tc.own {
				createApp(t, ns, "metadata: {name: web}\nspec:"+indent(v1Spec))
				owner = getApp(t, ns, "web")
			}
			var left []*v1beta1.ApplicationRevision
			for i := range tc.held {
				rev, err := apprevision.Build(owner, apprevision.Definitions{}, int64(i+1))
				if err != nil {
					t.Fatal(err)
				}
				rev.Namespace = ns
				if tc.hidden {
					rev.Labels, rev.OwnerReferences = nil, nil
				}
				if err := testClient.Create(ctx, rev); err != nil {
					t.Fatal(err)
				}
				left = append(left, rev)
			}
			startManager(t, testCfg, testOptions())
			if !tc.own {
				createApp(t, ns, "metadata: {name: web}\nspec:"+indent(v1Spec))
			}
			var listed []string
			if !tc.hidden && !tc.own {
				listed = tc.held
			}
			waitRevisions(t, ns, "web", append(listed, tc.want)...)
			waitSucceeded(t, ns, tc.want)
			if got := revisionLabel(t, ns, tracker.Name("web", ns, tracker.Versioned(1))); got != tc.want {
				t.Errorf("the version's tracker is labelled %q, want %s", got, tc.want)
			}
			for _, rev := range left {
				if tc.own {
					continue // the version's own: its status was written
				}
				after := &v1beta1.ApplicationRevision{}
				if err := testClient.Get(ctx, client.ObjectKeyFromObject(rev), after); err != nil {
					t.Fatal(err)
				}
				if after.ResourceVersion != rev.ResourceVersion {
					t.Errorf("revision %s, which held the name, was written (resourceVersion %s, was %s): %+v", rev.Name, after.ResourceVersion, rev.ResourceVersion, after.Status)
				}
			}
		})
	}
}

// An earlier Application of the same name left its first version's
// tracker (labelled web-v1) and revision web-v1, not yet collected. The
// new Application takes the tracker over, but not the revision: the
// version is recorded as web-v2, its tracker names web-v2, and web-v1 is
// never written.
func TestAppRevision_NewApplicationNamesPastALeftRevision(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	earlier := &v1beta1.Application{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, UID: "0ld-uid"}}
	left, err := apprevision.Build(earlier, apprevision.Definitions{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	left.Namespace = ns
	if err := testClient.Create(ctx, left); err != nil {
		t.Fatal(err)
	}
	store := &tracker.Store{Client: testClient}
	kind := tracker.Versioned(1)
	kind.Revision = "web-v1"
	if _, err := store.Record(ctx, tracker.RefOf(earlier), kind, 1, nil, tracker.DeleteMissing, nil); err != nil {
		t.Fatal(err)
	}
	startManager(t, testCfg, testOptions())
	createApp(t, ns, "metadata: {name: web}\nspec:"+indent(v1Spec))
	waitRevisions(t, ns, "web", "web-v1", "web-v2")
	waitSucceeded(t, ns, "web-v2")
	if got := revisionLabel(t, ns, tracker.Name("web", ns, tracker.Versioned(1))); got != "web-v2" {
		t.Errorf("the version's tracker is labelled %q, want web-v2", got)
	}
	after := &v1beta1.ApplicationRevision{}
	if err := testClient.Get(ctx, client.ObjectKeyFromObject(left), after); err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != left.ResourceVersion {
		t.Errorf("the revision the earlier Application left was written (resourceVersion %s, was %s): %+v", after.ResourceVersion, left.ResourceVersion, after.Status)
	}
}

// revisionLabel is the revision tracker name of app web is labelled with.
func revisionLabel(t *testing.T, ns, name string) string {
	t.Helper()
	rt := trackerNamed(t, ns, "web", name)
	if rt == nil {
		t.Fatalf("no tracker %s", name)
	}
	return rt.Labels[v1beta1.LabelAppRevision]
}

// keptSpec has two components; the garbage-collect rule keeps extra's
// objects after extra leaves the spec, so the tracker of the version that
// rendered it last stays, past the revision limit, as the record of it.
const keptSpec = `
components:
  - name: web
    type: test-worker
    properties: {image: "nginx:1.26"}
  - name: extra
    type: test-worker
    properties: {image: "busybox:1.36"}` + keepExtra

// keptSpecWithout is keptSpec without extra, the rule still there.
const keptSpecWithout = `
components:
  - name: web
    type: test-worker
    properties: {image: "nginx:1.27"}` + keepExtra

const keepExtra = `
policies:
  - name: keep-extra
    type: garbage-collect
    properties:
      rules:
        - {selector: {componentNames: [extra]}, strategy: never}
`

// A revision goes with its version's tracker: while the tracker is kept
// past the limit (it is the record of objects a rule keeps), so is the
// revision, and a rollback to the version takes up the revision of the
// spec that version rendered. The old code deleted the revision by count
// and, at the rollback, wrote it again from the Application as it was
// then: the wrong components (chaos seed 6565, timer mode).
func TestAppRevision_KeptWhileItsTrackerIs(t *testing.T) {
	ns := limitedTo(t, 1)
	createApp(t, ns, "metadata: {name: web, annotations: {app.oam.dev/publishVersion: alpha}}\nspec:"+indent(keptSpec))
	waitRevisions(t, ns, "web", "web-v1")
	setSpec(t, ns, "web", keptSpecWithout, map[string]string{v1beta1.AnnotationPublishVersion: "beta"})
	waitRevisions(t, ns, "web", "web-v1", "web-v2")
	setSpec(t, ns, "web", keptSpecWithout, map[string]string{v1beta1.AnnotationPublishVersion: "gamma"})
	// alpha's tracker is kept past the limit, the record of extra, and
	// its revision with it.
	waitRevisions(t, ns, "web", "web-v1", "web-v2", "web-v3")
	setSpec(t, ns, "web", keptSpecWithout, map[string]string{v1beta1.AnnotationPublishVersion: "delta"})
	alpha, beta := tracker.Name("web", ns, tracker.Published("alpha")), tracker.Name("web", ns, tracker.Published("beta"))
	eventually(t, 30*time.Second, "beta's tracker recycled past the limit", func() error {
		names := map[string]bool{}
		for _, rt := range trackersOf(t, ns, "web") {
			names[rt.Name] = true
		}
		if names[beta] || !names[alpha] {
			return fmt.Errorf("trackers %v: want alpha's kept (the record of extra), beta's gone", names)
		}
		return nil
	})
	// beta's revision went with its tracker; alpha's stays with its own.
	waitRevisions(t, ns, "web", "web-v1", "web-v3", "web-v4")

	setSpec(t, ns, "web", keptSpecWithout, map[string]string{v1beta1.AnnotationPublishVersion: "alpha"})
	v1 := waitSucceeded(t, ns, "web-v1")
	eventually(t, 30*time.Second, "web-v1 live again", func() error {
		if latest := getApp(t, ns, "web").Status.LatestRevision; latest == nil || latest.Name != "web-v1" {
			return fmt.Errorf("latestRevision %+v", latest)
		}
		return nil
	})
	fields, err := apprevision.Decode(v1)
	if err != nil {
		t.Fatal(err)
	}
	var comps []string
	for _, c := range fields.Application.Spec.Components {
		comps = append(comps, c.Name)
	}
	if strings.Join(comps, ",") != "web,extra" || apprevision.PublishVersionOf(v1) != "alpha" {
		t.Errorf("web-v1 records components %v of publishVersion %q, want alpha's web,extra", comps, apprevision.PublishVersionOf(v1))
	}
}

// A rollback to a version whose revision is gone (deleted by hand) writes
// none from the Application as it is now, which that version was not
// rendered from, and says so with a warning; nor does a later pass. The
// old code wrote web-v1 again with v2's spec.
func TestAppRevision_RollbackToAGoneRevisionWritesNone(t *testing.T) {
	ns := publishedTwice(t)
	ctx := context.Background()
	if err := testClient.Delete(ctx, &v1beta1.ApplicationRevision{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-v1"}}); err != nil {
		t.Fatal(err)
	}

	setSpec(t, ns, "web", v2Spec, map[string]string{v1beta1.AnnotationPublishVersion: "alpha"})
	msg := waitEvent(t, ns, "web", v1beta1.EventApplicationRevisionNotWritten)
	if !strings.Contains(msg, "web-v1") {
		t.Errorf("event %q does not name web-v1", msg)
	}
	eventually(t, 30*time.Second, "alpha's objects back", func() error {
		if !serviceExists(t, ns, "web") {
			return fmt.Errorf("no service")
		}
		return nil
	})
	if got := revisionNames(appRevisions(t, ns, "web")); got != "web-v2" {
		t.Errorf("revisions %s, want web-v2 alone: a web-v1 written now records v2's spec", got)
	}
	// Later passes, the rollback done: a spec edited under the same
	// publishVersion (the version stays as recorded) writes none either.
	setSpec(t, ns, "web", strings.Replace(v2Spec, "nginx:1.27", "nginx:1.28", 1), map[string]string{v1beta1.AnnotationPublishVersion: "alpha"})
	eventually(t, 30*time.Second, "the edited spec observed", func() error {
		if app := getApp(t, ns, "web"); app.Status.ObservedGeneration != app.Generation {
			return fmt.Errorf("observed generation %d of %d", app.Status.ObservedGeneration, app.Generation)
		}
		return nil
	})
	if got := revisionNames(appRevisions(t, ns, "web")); got != "web-v2" {
		t.Errorf("revisions %s after a later pass, want web-v2 alone", got)
	}
}

// A revision another Application owns is never deleted, though it carries
// this Application's app.oam.dev/name label (a tenant may label anything
// it creates): neither the limit nor the Application's deletion counts it.
// The old code deleted it by count, and with the Application.
func TestAppRevision_AnotherApplicationsRevisionIsNeverDeleted(t *testing.T) {
	ns := limitedTo(t, 1)
	ctx := context.Background()
	other := createApp(t, ns, "metadata: {name: other}\nspec:\n  components:\n    - {name: other, type: test-worker, properties: {image: \"nginx:1.27\"}}")
	foreign := &v1beta1.ApplicationRevision{ObjectMeta: metav1.ObjectMeta{
		Name: "foreign", Namespace: ns, Labels: map[string]string{v1beta1.LabelAppName: "web"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: v1beta1.GroupVersion.String(), Kind: "Application", Name: "other", UID: other.UID}},
	}}
	if err := testClient.Create(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	app := createApp(t, ns, "metadata: {name: web}\nspec:"+indent(v1Spec))
	waitRevisions(t, ns, "web", "foreign", "web-v1")
	setSpec(t, ns, "web", v2Spec, nil)
	waitRevisions(t, ns, "web", "foreign", "web-v1", "web-v2")
	setSpec(t, ns, "web", v1Spec, nil)
	waitRevisions(t, ns, "web", "foreign", "web-v2", "web-v3")

	if err := testClient.Delete(ctx, app); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "web gone", func() error {
		if err := testClient.Get(ctx, client.ObjectKeyFromObject(app), &v1beta1.Application{}); err == nil {
			return fmt.Errorf("still there")
		}
		return nil
	})
	if got := revisionNames(appRevisions(t, ns, "web")); got != "foreign" {
		t.Errorf("revisions labelled web after its deletion: %q, want other's foreign alone", got)
	}
}

// A version whose revision cannot be written (here an admission policy
// refuses it) is not named by the status, and its revision is written
// once it can be, without a new version. The old code named it at once
// and, finding it named, never wrote it.
func TestAppRevision_RefusedRevisionIsWrittenOnceItCanBe(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	lift := denyCreates(t, "applicationrevisions", "false", ns, func() error {
		probe := &v1beta1.ApplicationRevision{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: ns}}
		if err := testClient.Create(ctx, probe); err == nil {
			_ = testClient.Delete(ctx, probe)
			return errNotYet
		}
		return nil
	})
	startManager(t, testCfg, testOptions())
	createApp(t, ns, "metadata: {name: web}\nspec:"+indent(v1Spec))
	waitReady(t, ns, "web")
	if latest := getApp(t, ns, "web").Status.LatestRevision; latest != nil && latest.Name == "web-v1" {
		t.Errorf("latestRevision names web-v1, which was refused")
	}
	lift()
	waitRevisions(t, ns, "web", "web-v1")
}
