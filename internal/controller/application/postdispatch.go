package application

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cueeval"
	"github.com/steward-oam/steward/internal/delivery"
	"github.com/steward-oam/steward/internal/inventory"
	"github.com/steward-oam/steward/internal/render"
	"github.com/steward-oam/steward/internal/tracker"
)

// pendingTraitMessage is KubeVela's message for a PostDispatch trait
// waiting for its component.
const pendingTraitMessage = "\u23f3 Waiting for component to be healthy"

// postRender is how one placement's PostDispatch traits last rendered:
// the error when they could not.
type postRender struct {
	Err string `json:"e,omitempty"`
}

func postRenders(rt *v1beta1.ResourceTracker) map[string]postRender {
	out := map[string]postRender{}
	tracker.DecodeMark(rt, tracker.AnnotationPostDispatch, &out)
	return out
}

// postDispatchTraits returns the types of a component's traits of stage
// PostDispatch.
func postDispatchTraits(comp v1beta1.ApplicationComponent, defs render.Definitions) map[string]bool {
	var out map[string]bool
	for _, t := range comp.Traits {
		if d := defs.Traits[t.Type]; d != nil && d.Spec.Stage == v1beta1.TraitStagePostDispatch {
			if out == nil {
				out = map[string]bool{}
			}
			out[t.Type] = true
		}
	}
	return out
}

// pendingTrait says whether a PostDispatch trait of a placement is still
// pending, and why: not rendered yet (its workload is not healthy), or
// its render failed.
func (s *scope) pendingTrait(defs render.Definitions, key, trait string) (bool, string) {
	if d := defs.Traits[trait]; d == nil || d.Spec.Stage != v1beta1.TraitStagePostDispatch {
		return false, ""
	}
	pr, ok := postRenders(s.current)[key]
	switch {
	case !ok:
		return true, pendingTraitMessage
	case pr.Err != "":
		return true, "cannot render yet: " + pr.Err
	}
	return false, ""
}

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
func (r *Reconciler) dispatchPostTraits(ctx context.Context, s *scope) error {
	if s.current == nil || !s.keep.ran || s.renderErr != nil || s.identityErr != nil || s.rulesErr != nil ||
		s.current.Spec.ApplicationGeneration != s.app.Generation || s.flowErr != nil {
		return nil
	}
	if len(s.workloads) == 0 {
		return nil
	}
	defs := s.defs
	if !slices.ContainsFunc(s.app.Spec.Components, func(c v1beta1.ApplicationComponent) bool { return postDispatchTraits(c, defs) != nil }) {
		return nil
	}
	unread := make(map[tracker.Key]string, len(s.keep.unread))
	for _, u := range s.keep.unread {
		unread[u.key] = u.resourceVersion
	}
	comps := make(map[string]v1beta1.ApplicationComponent, len(s.app.Spec.Components))
	for _, c := range s.app.Spec.Components {
		comps[c.Name] = c
	}
	var renders map[string]postRender
	appKey := client.ObjectKeyFromObject(s.app)
	digests := map[string]string{}
	var objs []delivery.Object
	var placements []postPlacement
	for _, w := range s.workloads {
		comp := comps[w.component]
		post := postDispatchTraits(comp, defs)
		if post == nil {
			continue
		}
		if h, ok := s.health[w.key]; !ok || !h.workloadHealthy {
			continue
		}
		wkey := tracker.KeyOf(w.entry)
		rv := unread[wkey]
		if live := s.keep.live[wkey]; live != nil {
			rv = live.GetResourceVersion()
		}
		digest := postDigest(comp, defs, post, rv) + "/" + s.current.Name
		if r.postDigests.get(appKey, w.key) == digest {
			continue
		}
		if s.keep.live[wkey] == nil {
			if _, complete := r.readUnread(ctx, s, comp.Name, []v1beta1.ManagedResource{w.entry}, unread); !complete {
				continue
			}
		}
		live := s.keep.live[wkey]
		if live == nil {
			continue
		}
		auxes, err := r.renderPostDispatch(ctx, s, w.cluster, comp.Name, live, defs)
		if errors.Is(err, cueeval.ErrUnavailable) {
			return err
		}
		if renders == nil {
			renders = postRenders(s.current)
		}
		pr := postRender{}
		digests[w.key] = digest
		if err != nil {
			pr.Err = err.Error()
			ctrl.LoggerFrom(ctx).V(decisionLevel).Info("Skip: PostDispatch traits do not render yet", "component", comp.Name, "cluster", w.cluster, "error", pr.Err)
		}
		renders[w.key] = pr
		placements = append(placements, postPlacement{component: comp.Name, cluster: w.cluster, step: w.step, traits: post})
		for _, a := range auxes {
			objs = append(objs, delivery.Object{Cluster: w.cluster, Component: comp.Name, Trait: a.Trait, Step: w.step, Object: a.Object})
		}
	}
	if len(placements) == 0 {
		return nil
	}
	if err := r.recordPostTraits(ctx, s, objs, placements, renders); err != nil || s.recordErr != nil {
		return err
	}
	for k, d := range digests {
		r.postDigests.put(appKey, k, d)
	}
	return nil
}

// placedWorkload is a component's workload in one placement (health key).
type placedWorkload struct {
	key, component, cluster, step string
	entry                         v1beta1.ManagedResource
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
func (r *Reconciler) recordPostTraits(ctx context.Context, s *scope, objs []delivery.Object, placements []postPlacement, renders map[string]postRender) error {
	versioned, root, err := entriesOf(s.app, objs, s.rules)
	if err != nil {
		s.recordErr = err
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
	log := ctrl.LoggerFrom(ctx).V(decisionLevel)
	if len(root) > 0 && s.root != nil {
		entries, err := merge(s.root, root, false)
		if err == nil {
			err = r.Trackers.Save(ctx, s.root, entries, 0)
		}
		if err != nil {
			s.recordErr = err
			s.setRetry(err)
			return nil
		}
	}
	// The version records what root keeps of them too (inventory.WithRoot).
	entries, err := merge(s.current, inventory.WithRoot(versioned, root), true)
	if err != nil {
		s.recordErr = err
		return nil
	}
	raw, _ := json.Marshal(renders)
	rv := s.current.ResourceVersion
	if err := r.Trackers.SaveMarked(ctx, s.current, entries, 0, map[string]string{tracker.AnnotationPostDispatch: string(raw)}); err != nil {
		s.recordErr = err
		s.setRetry(err)
		return nil
	}
	if s.current.ResourceVersion == rv {
		// Rendered the same objects again: nothing to apply.
		return nil
	}
	for _, p := range placements {
		log.Info("Recorded PostDispatch traits", "component", p.component, "cluster", p.cluster, "tracker", s.current.Name)
	}
	s.postRecorded = true
	return nil
}

// postDigest identifies what a placement's PostDispatch traits render
// from: the component (its properties and traits), the definitions and
// the live workload's resourceVersion.
func postDigest(comp v1beta1.ApplicationComponent, defs render.Definitions, post map[string]bool, rv string) string {
	h := sha256.New()
	b, _ := json.Marshal(comp)
	h.Write(b)
	gens := []string{}
	if d := defs.Components[comp.Type]; d != nil {
		gens = append(gens, d.Namespace+"/"+d.Name+"@"+d.ResourceVersion)
	}
	for _, t := range comp.Traits {
		if d := defs.Traits[t.Type]; d != nil {
			gens = append(gens, d.Namespace+"/"+d.Name+"@"+d.ResourceVersion)
		}
	}
	b, _ = json.Marshal(gens)
	h.Write(b)
	h.Write([]byte(rv))
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// carryPostTraits adds to a new render the objects the kept version's
// PostDispatch traits rendered, for components that still have those
// traits: they are rendered again only once the workload is healthy, and
// must not be deleted (a Service re-created) in between.
func carryPostTraits(s *scope, defs render.Definitions, versioned, root []v1beta1.ManagedResource) ([]v1beta1.ManagedResource, []v1beta1.ManagedResource) {
	post := map[string]map[string]bool{}
	for _, c := range s.app.Spec.Components {
		if p := postDispatchTraits(c, defs); p != nil {
			post[c.Name] = p
		}
	}
	if len(post) == 0 {
		return versioned, root
	}
	carry := func(rt *v1beta1.ResourceTracker, into []v1beta1.ManagedResource) []v1beta1.ManagedResource {
		if rt == nil {
			return into
		}
		existing, err := tracker.Entries(rt)
		if err != nil {
			return into
		}
		have := tracker.IndexOf(into)
		for _, e := range existing {
			if e.Deleted || e.Data == nil || !post[e.Component][e.Trait] {
				continue
			}
			if _, ok := have[tracker.KeyOf(e)]; ok {
				continue
			}
			into = append(into, e)
		}
		return into
	}
	return carry(s.current, versioned), carry(s.root, root)
}

// renderPostDispatch renders a component's PostDispatch traits over its
// live workload, carrying out the provider actions (a helmchart's chart)
// the component's template asks for first.
func (r *Reconciler) renderPostDispatch(ctx context.Context, s *scope, clusterName, component string,
	live *unstructured.Unstructured, defs render.Definitions) ([]render.Auxiliary, error) {
	actx := r.healthContext(s)
	prepare := r.chartActions(ctx, s)
	kept := len(s.releases)
	defer func() { s.releases = s.releases[:kept] }() // noted for a version's record only
	for range 4 {
		auxes, err := r.Renderer.RenderPostDispatch(s.app, component, live.GetNamespace(), defs, actx, live)
		var need *render.ActionsError
		if !errors.As(err, &need) {
			return auxes, err
		}
		results, err := prepare(clusterName, s.app, need)
		if err != nil {
			return nil, err
		}
		actx.Actions = map[string][]cueeval.ActionResult{need.Component: results}
	}
	return nil, fmt.Errorf("component %q: its provider actions did not settle", component)
}
