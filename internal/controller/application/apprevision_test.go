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

// The limit keeps that many revisions besides the live one; the oldest go.
func TestAppRevision_LimitPrunes(t *testing.T) {
	ns := newNamespace(t)
	opts := testOptions()
	opts.RevisionLimit = 1
	startManager(t, testCfg, opts)
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

// `vela up --revision web-v1 --publish-version delta` after `vela workflow
// rollback` (which deletes the revisions after the one it goes back to):
// KubeVela's CLI freezes the Application, gives it web-v1's spec under
// publishVersion delta, writes the next revision itself under a name an
// older tracker still carries, and unfreezes. Steward takes that revision
// up as the live one, writes none of its own, and the older tracker gives
// the name up, so a name finds one tracker.
func TestAppRevision_UpWithRevisionTakesUpTheRevisionTheCLIWrote(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	startManager(t, testCfg, testOptions())
	createApp(t, ns, "metadata: {name: web, annotations: {app.oam.dev/publishVersion: alpha}}\nspec:"+indent(v1Spec))
	waitRevisions(t, ns, "web", "web-v1")
	setSpec(t, ns, "web", v2Spec, map[string]string{v1beta1.AnnotationPublishVersion: "beta"})
	waitRevisions(t, ns, "web", "web-v1", "web-v2")
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
