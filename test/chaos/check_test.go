package chaos

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/tracker"
)

// Violation kinds, as printed in reports and docs/chaos.md.
const (
	kindNotSettled    = "not-settled"    // an Application did not reach its current version in time
	kindDeleteStuck   = "delete-stuck"   // a deleted Application did not go in time
	kindMissing       = "missing"        // an object the live version renders does not exist
	kindContent       = "wrong-content"  // ... exists with other content
	kindKeptDeleted   = "kept-deleted"   // an object a policy keeps was deleted
	kindOrphan        = "orphan"         // an object labelled for an app exists that nothing wants or keeps
	kindForeign       = "foreign-change" // an object of nobody, or of another app, was modified or deleted
	kindUntracked     = "untracked"      // an object of a live app exists that none of its trackers lists
	kindTrackerGhost  = "tracker-ghost"  // a tracker lists an object with a manifest that does not exist
	kindTrackerMiss   = "tracker-missing"
	kindTrackerStale  = "tracker-stale" // a tracker of another incarnation, or of a deleted app, is left
	kindTrackerMarked = "tracker-marked"
	// a version whose spec did not render (a definition busted the
	// evaluation budget) was recorded
	kindBustedRecorded = "unrendered-recorded"
)

type violation struct {
	Kind    string
	Subject string
	Detail  string
	// App and Comp name what the violation is about, when known, to pick
	// the steps that matter out of the log.
	App, Comp string
}

func (v violation) key() string { return v.Kind + " " + v.Subject }

func (v violation) String() string { return fmt.Sprintf("[%s] %s: %s", v.Kind, v.Subject, v.Detail) }

// waitQuiet waits, at most timeout, until every live Application reports
// its current generation and version as dispatched, kept and collected,
// and every deleted Application is gone. On timeout it returns what it
// was still waiting for, as violations.
func (h *harness) waitQuiet(ctx context.Context, timeout time.Duration) []violation {
	deadline := time.Now().Add(timeout)
	for {
		waiting := h.notQuiet(ctx)
		if len(waiting) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return waiting
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func (h *harness) notQuiet(ctx context.Context) []violation {
	var out []violation
	for _, name := range appNames {
		model := h.world.Apps[name]
		app, err := h.getApp(ctx, name)
		if err != nil {
			return []violation{{Kind: kindNotSettled, Subject: "app " + name, Detail: "reading it: " + err.Error(), App: name}}
		}
		if !model.Exists {
			if app != nil {
				out = append(out, violation{Kind: kindDeleteStuck, Subject: "app " + name, App: name,
					Detail: fmt.Sprintf("deleted but still there (finalizers %v, phase %s, Ready: %s)", app.Finalizers, app.Status.Phase, condString(app, v1beta1.ConditionReady))})
			}
			continue
		}
		if app == nil {
			out = append(out, violation{Kind: kindNotSettled, Subject: "app " + name, Detail: "missing", App: name})
			continue
		}
		if msg := settledMessage(app, model); msg != "" {
			out = append(out, violation{Kind: kindNotSettled, Subject: "app " + name, Detail: msg, App: name})
		}
	}
	out = append(out, h.flowNotQuiet(ctx)...)
	return append(out, h.budgetNotQuiet(ctx)...)
}

// settledMessage says why app is not yet settled at its current version,
// or "" when it is.
func settledMessage(app *v1beta1.Application, model *appModel) string {
	gen := app.Generation
	if !controllerutil.ContainsFinalizer(app, v1beta1.FinalizerResourceTracker) {
		return "no finalizer yet"
	}
	if app.Status.ObservedGeneration != gen {
		return fmt.Sprintf("status.observedGeneration %d, generation %d", app.Status.ObservedGeneration, gen)
	}
	for _, t := range []string{v1beta1.ConditionRendered, v1beta1.ConditionDispatched, v1beta1.ConditionStateKept, v1beta1.ConditionGarbageCollected} {
		c := v1beta1.FindCondition(app.Status.Conditions, t)
		if c == nil || c.ObservedGeneration != gen || c.Status != metav1.ConditionTrue {
			return fmt.Sprintf("waiting for %s=True at generation %d: %s", t, gen, condString(app, t))
		}
	}
	rev := app.Status.LatestRevision
	switch {
	case rev == nil:
		return "no status.latestRevision"
	case model.PV != "" && rev.RevisionHash != model.PV:
		return fmt.Sprintf("status.latestRevision is %s, want publishVersion %s", rev.Name, model.PV)
	case model.PV == "" && (rev.Revision < gen || rev.Name != fmt.Sprintf("%s-v%d", app.Name, rev.Revision)):
		// The version's ApplicationRevision: <app>-v<N>, N the generation
		// unless a published version took that number.
		return fmt.Sprintf("status.latestRevision is %s (%d), want %s-v<N>, N at least %d", rev.Name, rev.Revision, app.Name, gen)
	}
	return ""
}

func condString(app *v1beta1.Application, t string) string {
	c := v1beta1.FindCondition(app.Status.Conditions, t)
	if c == nil {
		return "absent"
	}
	return fmt.Sprintf("%s (%s, generation %d) %q", c.Status, c.Reason, c.ObservedGeneration, c.Message)
}

// checkInvariants polls the invariants until none fails that was not
// reported already, at most timeout (long enough for two re-sync
// periods, so a repair StateKeep makes on its next pass is waited for).
// It returns the new violations of the last poll.
func (h *harness) checkInvariants(ctx context.Context, timeout time.Duration, reported map[string]bool) []violation {
	deadline := time.Now().Add(timeout)
	for {
		var fresh []violation
		for _, v := range h.invariants(ctx) {
			if !reported[v.key()] {
				fresh = append(fresh, v)
			}
		}
		if len(fresh) == 0 || time.Now().After(deadline) {
			return fresh
		}
		time.Sleep(time.Second)
	}
}

type liveObj struct {
	kind, name string
	labels     map[string]string
	value      string
	uid        string
	rv         string
	// clientSide: the object still carries what a client-side apply
	// left (the last-applied annotation, or the stale field the
	// clientSideApplied step adds).
	clientSide bool
}

func (h *harness) liveObjects(ctx context.Context) (map[string]liveObj, error) {
	out := map[string]liveObj{}
	var cms corev1.ConfigMapList
	if err := h.c.List(ctx, &cms, client.InNamespace(chaosNS)); err != nil {
		return nil, err
	}
	for _, cm := range cms.Items {
		_, stale := cm.Data[staleKey]
		out[objKey("ConfigMap", cm.Name)] = liveObj{"ConfigMap", cm.Name, cm.Labels, cm.Data["v"], string(cm.UID), cm.ResourceVersion,
			stale || cm.Annotations[v1beta1.AnnotationLastApplied] != ""}
	}
	var deps appsv1.DeploymentList
	if err := h.c.List(ctx, &deps, client.InNamespace(chaosNS)); err != nil {
		return nil, err
	}
	for _, d := range deps.Items {
		image := ""
		if cs := d.Spec.Template.Spec.Containers; len(cs) > 0 {
			image = cs[0].Image
		}
		out[objKey("Deployment", d.Name)] = liveObj{"Deployment", d.Name, d.Labels, image, string(d.UID), d.ResourceVersion,
			d.Annotations[v1beta1.AnnotationLastApplied] != ""}
	}
	return out, nil
}

func isChaosApp(name string) bool {
	for _, n := range appNames {
		if n == name {
			return true
		}
	}
	return false
}

// invariants checks the cluster against the model once.
func (h *harness) invariants(ctx context.Context) []violation {
	live, err := h.liveObjects(ctx)
	if err != nil {
		return []violation{{Kind: kindNotSettled, Subject: "cluster", Detail: "listing objects: " + err.Error()}}
	}
	var out []violation
	add := func(kind, subject, format string, args ...any) {
		out = append(out, violation{Kind: kind, Subject: subject, Detail: fmt.Sprintf(format, args...)})
	}
	// Foreign objects: never modified, never deleted.
	for _, f := range h.foreign {
		l, ok := live[objKey(f.kind, f.name)]
		switch {
		case !ok:
			add(kindForeign, f.kind+" "+f.name, "deleted (%s)", f.desc)
		case l.uid != f.uid:
			add(kindForeign, f.kind+" "+f.name, "replaced: uid %s, was %s (%s)", l.uid, f.uid, f.desc)
		case l.rv != f.rv:
			add(kindForeign, f.kind+" "+f.name, "modified: resourceVersion %s, was %s; labels now %v (%s)", l.rv, f.rv, l.labels, f.desc)
		}
	}
	// Objects the model knows.
	for _, k := range sortedKeys(h.world.Objects) {
		o := h.world.Objects[k]
		l, ok := live[k]
		add := func(kind, subject, format string, args ...any) {
			out = append(out, violation{Kind: kind, Subject: subject, Detail: fmt.Sprintf(format, args...), App: o.App, Comp: o.Comp})
		}
		switch o.State {
		case present:
			if !ok {
				kind := kindMissing
				if o.Kept || o.Untracked {
					kind = kindKeptDeleted
				}
				add(kind, o.String(), "does not exist; %s", h.why(o))
				continue
			}
			if o.CheckContent && l.value != o.Value {
				add(kindContent, o.String(), "has %q, want %q", l.value, o.Value)
			}
			if o.CheckContent && l.clientSide {
				add(kindContent, o.String(), "still carries the last-applied annotation or data.%s of a client-side apply: not upgraded", staleKey)
			}
		case absent:
			if ok && l.labels[v1beta1.LabelAppName] == o.App && l.labels[v1beta1.LabelAppNamespace] == chaosNS {
				add(kindOrphan, o.String(), "exists, but no version renders it and no policy keeps it; %s", h.why(o))
			}
		}
	}
	// Labelled objects the model never heard of.
	for _, k := range sortedKeys(live) {
		l := live[k]
		if isChaosApp(l.labels[v1beta1.LabelAppName]) && l.labels[v1beta1.LabelAppNamespace] == chaosNS && h.world.Objects[k] == nil {
			add(kindOrphan, l.kind+" "+chaosNS+"/"+l.name, "labelled for app %s, which never rendered it", l.labels[v1beta1.LabelAppName])
		}
	}
	out = append(out, h.trackerInvariants(ctx, live)...)
	out = append(out, h.revisionInvariants(ctx)...)
	out = append(out, h.budgetInvariants(ctx, live)...)
	out = append(out, h.hostileInvariants(ctx, false)...)
	out = append(out, h.flowInvariants(ctx, live)...)
	return out
}

// why describes the model's reason for an object's expected state.
func (h *harness) why(o *object) string {
	app := h.world.Apps[o.App]
	var parts []string
	if !app.Exists {
		parts = append(parts, "app deleted")
	} else if _, ok := app.effective().Components[o.Comp]; ok {
		parts = append(parts, "the live version renders it")
	} else {
		parts = append(parts, "the live version does not render it")
	}
	if s := app.Spec.GC[o.Comp]; s != "" {
		parts = append(parts, "garbage-collect "+s)
	}
	if app.Spec.ReadOnly[o.Comp] {
		parts = append(parts, "read-only")
	}
	if o.Kept {
		parts = append(parts, "kept by a policy")
	}
	if o.Untracked {
		parts = append(parts, "left by a deleted incarnation")
	}
	return strings.Join(parts, ", ")
}

// trackerInvariants: the trackers of a live app list exactly what exists
// for it; a deleted app leaves no tracker.
func (h *harness) trackerInvariants(ctx context.Context, live map[string]liveObj) []violation {
	var out []violation
	var app string
	add := func(kind, subject, format string, args ...any) {
		out = append(out, violation{Kind: kind, Subject: subject, Detail: fmt.Sprintf(format, args...), App: app})
	}
	for _, name := range appNames {
		app = name
		model := h.world.Apps[name]
		rts, err := h.trackers(ctx, name)
		if err != nil {
			return append(out, violation{Kind: kindNotSettled, Subject: "trackers of " + name, Detail: err.Error(), App: name})
		}
		if !model.Exists {
			for _, rt := range rts {
				add(kindTrackerStale, "resource tracker "+rt.Name, "app %s was deleted, its tracker is left", name)
			}
			continue
		}
		live0, err := h.getApp(ctx, name)
		if err != nil || live0 == nil {
			continue // reported by the quiet wait
		}
		uid := string(live0.UID)
		currentName := tracker.Name(name, chaosNS, tracker.VersionOf(live0))
		rootName := tracker.Name(name, chaosNS, tracker.Root())
		var current, root *v1beta1.ResourceTracker
		// Objects a policy keeps after they left the spec stay listed by
		// the older tracker that recorded them, which Steward keeps past
		// the revision limit for them (concepts.md, Garbage collection).
		listedByAny := map[string]bool{}
		for i := range rts {
			rt := &rts[i]
			if rt.Labels[v1beta1.LabelAppUID] != uid {
				add(kindTrackerStale, "resource tracker "+rt.Name, "belongs to an earlier incarnation of %s (uid %s)", name, rt.Labels[v1beta1.LabelAppUID])
				continue
			}
			if entries, err := tracker.Entries(rt); err == nil {
				for _, e := range entries {
					if e.Namespace == chaosNS && e.Cluster == "" && !e.Deleted {
						listedByAny[objKey(e.Kind, e.Name)] = true
					}
				}
			}
			switch rt.Name {
			case currentName:
				current = rt
			case rootName:
				root = rt
			}
		}
		if current == nil {
			add(kindTrackerMiss, "app "+name, "the tracker of its live version, %s, does not exist", currentName)
			continue
		}
		listed := map[string]bool{}
		for _, rt := range []*v1beta1.ResourceTracker{current, root} {
			if rt == nil {
				continue
			}
			entries, err := tracker.Entries(rt)
			if err != nil {
				add(kindTrackerGhost, "resource tracker "+rt.Name, "cannot decode: %v", err)
				continue
			}
			for _, e := range entries {
				if e.Namespace != chaosNS || e.Cluster != "" {
					continue
				}
				k := objKey(e.Kind, e.Name)
				listed[k] = true
				if e.Deleted {
					add(kindTrackerMarked, "resource tracker "+rt.Name, "%s is still marked deleted after a quiet period", k)
				}
				if _, ok := live[k]; !ok && e.Data != nil && len(e.Data.Raw) > 0 {
					add(kindTrackerGhost, "resource tracker "+rt.Name, "lists %s with a manifest, which does not exist", k)
				}
			}
		}
		for _, k := range sortedKeys(live) {
			l := live[k]
			if l.labels[v1beta1.LabelAppName] != name || l.labels[v1beta1.LabelAppNamespace] != chaosNS || listed[k] {
				continue
			}
			o := h.world.Objects[k]
			if o != nil && (o.Untracked || o.State == undetermined) {
				continue
			}
			if o != nil && o.Kept && listedByAny[k] {
				continue
			}
			if o != nil && o.Kept && model.Spec.ReadOnly[o.Comp] && model.Spec.GC[o.Comp] == "" {
				// Kept by read-only alone: policies.md only promises it is
				// never deleted, not that a current tracker lists it.
				continue
			}
			comp := l.labels[v1beta1.LabelAppComponent]
			out = append(out, violation{Kind: kindUntracked, Subject: l.kind + " " + chaosNS + "/" + l.name,
				Detail: fmt.Sprintf("labelled for live app %s, listed by neither %s nor %s (nor, if a policy keeps it, by an older tracker)", name, currentName, rootName), App: name, Comp: comp})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key() < out[j].key() })
	return out
}

// foreignObj is an object the suite created outside any Application.
type foreignObj struct {
	kind, name, desc string
	uid, rv          string
}

// createForeign creates objects that belong to nobody or to another
// Application; none may ever be modified or deleted.
func (h *harness) createForeign(ctx context.Context) error {
	objs := []struct {
		obj  client.Object
		desc string
	}{
		{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "foreign-nobody"}, Data: map[string]string{"v": "mine"}}, "belongs to nobody"},
		{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "foreign-ghost", Labels: map[string]string{
			v1beta1.LabelAppName: "ghost", v1beta1.LabelAppNamespace: chaosNS}}, Data: map[string]string{"v": "ghost's"}},
			"labelled for app chaos/ghost, which does not exist"},
		{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "foreign-alpha-elsewhere", Labels: map[string]string{
			v1beta1.LabelAppName: "alpha", v1beta1.LabelAppNamespace: "elsewhere", v1beta1.LabelAppComponent: "alpha-cm-1"}}, Data: map[string]string{"v": "theirs"}},
			"labelled for app elsewhere/alpha, a namesake in another namespace"},
		{&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "foreign-web"}, Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "foreign-web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "foreign-web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:foreign"}}},
			}}}, "a Deployment of nobody"},
	}
	for _, o := range objs {
		o.obj.SetNamespace(chaosNS)
		if err := h.c.Create(ctx, o.obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating foreign object %s: %w", o.obj.GetName(), err)
		}
		kind := "ConfigMap"
		if _, ok := o.obj.(*appsv1.Deployment); ok {
			kind = "Deployment"
		}
		h.foreign = append(h.foreign, foreignObj{kind: kind, name: o.obj.GetName(), desc: o.desc,
			uid: string(o.obj.GetUID()), rv: o.obj.GetResourceVersion()})
	}
	return nil
}
