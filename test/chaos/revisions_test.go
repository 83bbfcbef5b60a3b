package chaos

import (
	"context"
	"fmt"
	"slices"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/apprevision"
	"github.com/steward-oam/steward/internal/tracker"
)

// revisionLimit is the --application-revision-limit the suite's
// controller runs with.
const revisionLimit = 4

// Violation kinds of ApplicationRevisions (docs/chaos.md).
const (
	kindRevisionStale  = "revision-stale"   // a revision of a deleted app, or of an earlier incarnation, is left
	kindRevisionMiss   = "revision-missing" // the live version's revision does not exist or does not hold it
	kindRevisionExcess = "revision-excess"  // more revisions than the limit keeps
)

// revisionInvariants: a deleted Application leaves no ApplicationRevision
// (envtest runs no garbage collector: the finalizer must delete them);
// a live one has the revision status.latestRevision names, owned by this
// incarnation, named by the live tracker's app.oam.dev/appRevision label,
// holding the live version's components and their definitions (what
// `vela live-diff` and `vela workflow rollback` read), and at most the
// limit besides it.
func (h *harness) revisionInvariants(ctx context.Context) []violation {
	var out []violation
	for _, name := range appNames {
		add := func(kind, subject, format string, args ...any) {
			out = append(out, violation{Kind: kind, Subject: subject, Detail: fmt.Sprintf(format, args...), App: name})
		}
		var list v1beta1.ApplicationRevisionList
		if err := h.c.List(ctx, &list, client.InNamespace(chaosNS), client.MatchingLabels{v1beta1.LabelAppName: name}); err != nil {
			return append(out, violation{Kind: kindNotSettled, Subject: "revisions of " + name, Detail: err.Error(), App: name})
		}
		model := h.world.Apps[name]
		if !model.Exists {
			for _, r := range list.Items {
				add(kindRevisionStale, "application revision "+r.Name, "app %s was deleted, its revision is left", name)
			}
			continue
		}
		app, err := h.getApp(ctx, name)
		if err != nil || app == nil || app.Status.LatestRevision == nil {
			continue // reported by the quiet wait
		}
		for _, r := range list.Items {
			if owner := ownerUID(&r); owner != string(app.UID) {
				add(kindRevisionStale, "application revision "+r.Name, "owned by %q, not the live incarnation of %s (uid %s)", owner, name, app.UID)
			}
		}
		// A revision goes with its version's tracker, which may be kept
		// past the limit (the record of objects a rule keeps).
		tracked, err := h.trackedRevisions(ctx, name, app)
		if err != nil {
			return append(out, violation{Kind: kindNotSettled, Subject: "trackers of " + name, Detail: err.Error(), App: name})
		}
		kept := 0
		for _, r := range list.Items {
			if tracked[r.Name] {
				kept++
			}
		}
		if n := len(list.Items); n > max(revisionLimit+1, kept) {
			add(kindRevisionExcess, "app "+name, "%d revisions, the limit keeps %d besides the live one (%d named by trackers that exist)", n, revisionLimit, kept)
		}
		liveName := app.Status.LatestRevision.Name
		var live *v1beta1.ApplicationRevision
		for i := range list.Items {
			if list.Items[i].Name == liveName {
				live = &list.Items[i]
			}
		}
		if live == nil {
			add(kindRevisionMiss, "app "+name, "status.latestRevision names %s, which does not exist", liveName)
			continue
		}
		rt := &v1beta1.ResourceTracker{}
		if err := h.c.Get(ctx, client.ObjectKey{Name: tracker.Name(name, chaosNS, tracker.VersionOf(app))}, rt); err == nil {
			if got := rt.Labels[v1beta1.LabelAppRevision]; got != liveName {
				add(kindRevisionMiss, "resource tracker "+rt.Name, "labelled with revision %q, the status names %s", got, liveName)
			}
		}
		fields, err := apprevision.Decode(live)
		if err != nil {
			add(kindRevisionMiss, "application revision "+liveName, "cannot decode: %v", err)
			continue
		}
		var comps []string
		types := map[string]bool{}
		for _, c := range fields.Application.Spec.Components {
			comps = append(comps, c.Name)
			types[c.Type] = true
		}
		sort.Strings(comps)
		if want := sortedKeys(model.effective().Components); !slices.Equal(comps, want) {
			add(kindRevisionMiss, "application revision "+liveName, "records components %v, the live version renders %v", comps, want)
		}
		for t := range types {
			if fields.ComponentDefinitions[t] == nil {
				add(kindRevisionMiss, "application revision "+liveName, "does not hold the definition of component type %s, which the live version uses", t)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key() < out[j].key() })
	return out
}

// trackedRevisions are the revision names the Application's versioned
// trackers (of this incarnation) carry.
func (h *harness) trackedRevisions(ctx context.Context, name string, app *v1beta1.Application) (map[string]bool, error) {
	var rts v1beta1.ResourceTrackerList
	if err := h.c.List(ctx, &rts, client.MatchingLabels{v1beta1.LabelAppName: name, v1beta1.LabelAppNamespace: chaosNS, v1beta1.LabelAppUID: string(app.UID)}); err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, rt := range rts.Items {
		if n := rt.Labels[v1beta1.LabelAppRevision]; n != "" {
			out[n] = true
		}
	}
	return out, nil
}

// ownerUID is the UID of the Application that controls a revision.
func ownerUID(r *v1beta1.ApplicationRevision) string {
	if ref := metav1.GetControllerOfNoCopy(r); ref != nil && ref.Kind == "Application" {
		return string(ref.UID)
	}
	return ""
}
