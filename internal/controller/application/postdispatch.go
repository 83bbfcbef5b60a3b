package application

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/application/decisionlog"
	"github.com/steward-oam/steward/internal/controller/application/facts"
	"github.com/steward-oam/steward/internal/controller/application/record"
	"github.com/steward-oam/steward/internal/cueeval"
	"github.com/steward-oam/steward/internal/delivery"
	"github.com/steward-oam/steward/internal/inventory"
	"github.com/steward-oam/steward/internal/render"
	"github.com/steward-oam/steward/internal/tracker"
)

// pendingTraitMessage is KubeVela's message for a PostDispatch trait
// waiting for its component.
const pendingTraitMessage = "\u23f3 Waiting for component to be healthy"

// dispatchPostTraits renders the PostDispatch traits of every placement
// of a component whose workload is healthy, with the live workload as
// context.output, as KubeVela does, and records what they render in the
// version's trackers; the next pass, requeued at once, applies it
// (recorded before applied, like everything else). A placement is
// rendered again only when its workload's resourceVersion, its traits or
// their definitions changed, so a steady state evaluates nothing. Objects
// a new render no longer produces are marked deleted, and keepState
// deletes them. A render that fails leaves the traits pending, with the
// error in their status; nothing else of the Application is held.
func (r *Reconciler) dispatchPostTraits(ctx context.Context, s *facts.Pass) error {
	if s.Current == nil || !s.Keep.Ran || s.RenderErr != nil || s.IdentityErr != nil || s.RulesErr != nil ||
		s.Current.Spec.ApplicationGeneration != s.App.Generation || s.FlowErr != nil {
		return nil
	}
	if len(s.Workloads) == 0 {
		return nil
	}
	defs := s.Defs
	if !slices.ContainsFunc(s.App.Spec.Components, func(c v1beta1.ApplicationComponent) bool { return record.PostDispatchTraits(c, defs) != nil }) {
		return nil
	}
	unread := make(map[tracker.Key]string, len(s.Keep.Unread))
	for _, u := range s.Keep.Unread {
		unread[u.Key] = u.ResourceVersion
	}
	comps := make(map[string]v1beta1.ApplicationComponent, len(s.App.Spec.Components))
	for _, c := range s.App.Spec.Components {
		comps[c.Name] = c
	}
	var renders map[string]record.PostRender
	appKey := client.ObjectKeyFromObject(s.App)
	digests := map[string]string{}
	var objs []delivery.Object
	var placements []postPlacement
	for _, w := range s.Workloads {
		comp := comps[w.Component]
		post := record.PostDispatchTraits(comp, defs)
		if post == nil {
			continue
		}
		if h, ok := s.Health[w.Key]; !ok || !h.WorkloadHealthy {
			continue
		}
		wkey := tracker.KeyOf(w.Entry)
		rv := unread[wkey]
		if live := s.Keep.Live[wkey]; live != nil {
			rv = live.GetResourceVersion()
		}
		digest := record.PostDigest(comp, defs, post, rv) + "/" + s.Current.Name
		if r.PostDigests.Get(appKey, w.Key) == digest {
			continue
		}
		if s.Keep.Live[wkey] == nil {
			if _, complete := r.readUnread(ctx, s, comp.Name, []v1beta1.ManagedResource{w.Entry}, unread); !complete {
				continue
			}
		}
		live := s.Keep.Live[wkey]
		if live == nil {
			continue
		}
		auxes, err := r.renderPostDispatch(ctx, s, w.Cluster, comp.Name, live, defs)
		if errors.Is(err, cueeval.ErrUnavailable) {
			return err
		}
		if renders == nil {
			renders = record.PostRenders(s.Current)
		}
		pr := record.PostRender{}
		digests[w.Key] = digest
		if err != nil {
			pr.Err = err.Error()
			ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info("Skip: PostDispatch traits do not render yet", "component", comp.Name, "cluster", w.Cluster, "error", pr.Err)
		}
		renders[w.Key] = pr
		placements = append(placements, postPlacement{component: comp.Name, cluster: w.Cluster, step: w.Step, traits: post})
		for _, a := range auxes {
			objs = append(objs, delivery.Object{Cluster: w.Cluster, Component: comp.Name, Trait: a.Trait, Step: w.Step, Object: a.Object})
		}
	}
	if len(placements) == 0 {
		return nil
	}
	if err := r.recordPostTraits(ctx, s, objs, placements, renders); err != nil || s.RecordErr != nil {
		return err
	}
	for k, d := range digests {
		r.PostDigests.Put(appKey, k, d)
	}
	return nil
}

// postPlacement is one placement whose PostDispatch traits rendered anew.
type postPlacement struct {
	component, cluster, step string
	traits                   map[string]bool
}

func (p postPlacement) owns(e v1beta1.ManagedResource) bool {
	return e.Component == p.component && e.Cluster == p.cluster && p.traits[e.Trait]
}

// recordPostTraits writes what PostDispatch traits rendered into the
// version's trackers, with the digests, in one write per tracker.
func (r *Reconciler) recordPostTraits(ctx context.Context, s *facts.Pass, objs []delivery.Object, placements []postPlacement, renders map[string]record.PostRender) error {
	versioned, root, err := record.Entries(s.App, objs, s.Rules)
	if err != nil {
		s.RecordErr = err
		return nil
	}
	merge := func(rt *v1beta1.ResourceTracker, add []v1beta1.ManagedResource, dropMissing bool) ([]v1beta1.ManagedResource, error) {
		existing, err := tracker.Entries(rt)
		if err != nil {
			return nil, err
		}
		want := tracker.IndexOf(add)
		out := make([]v1beta1.ManagedResource, 0, len(existing)+len(add))
		for _, e := range existing {
			if _, ok := want[tracker.KeyOf(e)]; ok {
				continue
			}
			if dropMissing && !e.Deleted && slices.ContainsFunc(placements, func(p postPlacement) bool { return p.owns(e) }) {
				// No longer rendered: keepState deletes it.
				e.Deleted = true
			}
			out = append(out, e)
		}
		return append(out, add...), nil
	}
	log := ctrl.LoggerFrom(ctx).V(decisionlog.Decision)
	if len(root) > 0 && s.Root != nil {
		entries, err := merge(s.Root, root, false)
		if err == nil {
			err = r.Trackers.Save(ctx, s.Root, entries, 0)
		}
		if err != nil {
			s.RecordErr = err
			s.SetRetry(err)
			return nil
		}
	}
	// The version records what root keeps of them too (inventory.WithRoot).
	entries, err := merge(s.Current, inventory.WithRoot(versioned, root), true)
	if err != nil {
		s.RecordErr = err
		return nil
	}
	raw, _ := json.Marshal(renders)
	rv := s.Current.ResourceVersion
	if err := r.Trackers.SaveMarked(ctx, s.Current, entries, 0, map[string]string{tracker.AnnotationPostDispatch: string(raw)}); err != nil {
		s.RecordErr = err
		s.SetRetry(err)
		return nil
	}
	if s.Current.ResourceVersion == rv {
		// Rendered the same objects again: nothing to apply.
		return nil
	}
	for _, p := range placements {
		log.Info("Recorded PostDispatch traits", "component", p.component, "cluster", p.cluster, "tracker", s.Current.Name)
	}
	s.PostRecorded = true
	return nil
}

// renderPostDispatch renders a component's PostDispatch traits over its
// live workload, carrying out the provider actions (a helmchart's chart)
// the component's template asks for first.
func (r *Reconciler) renderPostDispatch(ctx context.Context, s *facts.Pass, clusterName, component string,
	live *unstructured.Unstructured, defs render.Definitions) ([]render.Auxiliary, error) {
	actx := r.healthContext(s)
	prepare := r.chartActions(ctx, s)
	kept := len(s.Releases)
	defer func() { s.Releases = s.Releases[:kept] }() // noted for a version's record only
	for range 4 {
		auxes, err := r.Renderer.RenderPostDispatch(s.App, component, live.GetNamespace(), defs, actx, live)
		var need *render.ActionsError
		if !errors.As(err, &need) {
			return auxes, err
		}
		results, err := prepare(clusterName, s.App, need)
		if err != nil {
			return nil, err
		}
		actx.Actions = map[string][]cueeval.ActionResult{need.Component: results}
	}
	return nil, fmt.Errorf("component %q: its provider actions did not settle", component)
}

// pendingTrait says whether a PostDispatch trait of a placement is still
// pending, and why: not rendered yet (its workload is not healthy), or
// its render failed.
func pendingTrait(s *facts.Pass, defs render.Definitions, key, trait string) (bool, string) {
	if d := defs.Traits[trait]; d == nil || d.Spec.Stage != v1beta1.TraitStagePostDispatch {
		return false, ""
	}
	pr, ok := record.PostRenders(s.Current)[key]
	switch {
	case !ok:
		return true, pendingTraitMessage
	case pr.Err != "":
		return true, "cannot render yet: " + pr.Err
	}
	return false, ""
}
