package application

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cueeval"
	"github.com/steward-oam/steward/internal/inventory"
	"github.com/steward-oam/steward/internal/render"
	"github.com/steward-oam/steward/internal/tracker"
)

// componentHealth is the health of one component and its traits.
type componentHealth struct {
	render.Health
	traits []v1beta1.ApplicationTraitStatus
	// workloadHealthy is the component's own health, its traits aside:
	// its PostDispatch traits render once it is true.
	workloadHealthy bool
}

// evaluateHealth runs each component's health policy over the live objects
// StateKeep just read: no object is read again. A component with no
// policy is healthy, as in KubeVela; with --kstatus-health, built-in kinds
// without a policy use kstatus readiness instead.
func (r *Reconciler) evaluateHealth(ctx context.Context, s *scope) error {
	if s.current == nil || !s.keep.ran {
		return nil
	}
	// Objects a garbage-collect rule keeps in the root tracker are part of
	// their component too.
	entries, err := inventory.AppliedOf(s.current, s.root)
	if err != nil {
		return nil
	}
	// Objects of workflow steps not reached yet are not this version's
	// yet: their components are judged once they are applied.
	entries = slices.DeleteFunc(entries, s.gatedEntry)
	defs, err := r.resolveDefinitions(ctx, s.app)
	if err != nil {
		s.setRetry(err)
		return err
	}
	unread := make(map[tracker.Key]string, len(s.keep.unread))
	for _, u := range s.keep.unread {
		unread[u.key] = u.resourceVersion
	}
	actx := r.healthContext(s)
	app := client.ObjectKeyFromObject(s.app)
	var cached []cachedHealth
	s.health = map[string]componentHealth{}
	s.workloads, s.defs = nil, defs
	for _, comp := range s.app.Spec.Components {
		// dispatchPostTraits renders over the workload of a component
		// with PostDispatch traits.
		post := postDispatchTraits(comp, defs) != nil
		for _, g := range s.byClusterAndStep(entries) {
			if !hasManifests(g.entries, comp.Name) {
				continue
			}
			k := healthKey(comp.Name, g.cluster, g.step)
			workload := func(wl *v1beta1.ManagedResource) {
				if wl != nil && post {
					s.workloads = append(s.workloads, placedWorkload{key: k, component: comp.Name, cluster: g.cluster, step: g.step, entry: *wl})
				}
			}
			fp := healthFingerprint(s, defs, comp, g.entries, unread)
			if h, ok := r.health.get(app, k, fp); ok {
				// A health kept is reused without decoding a manifest,
				// unless the workload is wanted.
				if post {
					_, wl := manifestsAndWorkload(g.entries, comp.Name)
					workload(wl)
				}
				s.health[k] = h
				cached = append(cached, cachedHealth{key: k, fingerprint: fp, health: h})
				continue
			}
			manifests, wl := manifestsAndWorkload(g.entries, comp.Name)
			if len(manifests) == 0 {
				continue
			}
			workload(wl)
			read, complete := r.readUnread(ctx, s, comp.Name, g.entries, unread)
			var live []*unstructured.Unstructured
			for _, e := range g.entries {
				if e.Component == comp.Name && !e.Deleted && e.Data != nil {
					live = append(live, r.liveOrNil(s, e))
				}
			}
			pending := func(trait string) (bool, string) { return s.pendingTrait(defs, k, trait) }
			h, err := r.healthOf(s, defs, comp, actx, manifests, live, pending)
			if err != nil {
				// No evaluator (the controller is stopping): nothing is
				// known of health; the pass stops and is retried.
				return err
			}
			s.health[k] = h
			if read > 0 {
				// Objects read just now carry their own resourceVersions.
				fp = healthFingerprint(s, defs, comp, g.entries, unread)
			}
			// A health the budget stopped is not kept: the evaluators
			// remember the failure and answer it again at no cost until its
			// back-off ends, then evaluate it once more.
			if complete && s.health[k].Reason == "" {
				cached = append(cached, cachedHealth{key: k, fingerprint: fp, health: s.health[k]})
			}
		}
	}
	r.health.put(app, cached)
	return nil
}

// healthKey identifies a component in one cluster and, in a workflow run
// step by step, one step: two steps that deliver a component to two
// namespaces of one cluster are judged each on its own objects.
func healthKey(component, clusterName, step string) string {
	k := component + "@" + v1beta1.ClusterKey(clusterName)
	if step != "" {
		k += "/" + step
	}
	return k
}

// splitHealthKey returns the component, cluster and step of a key.
func splitHealthKey(k string) (component, clusterName, step string) {
	component, rest, _ := strings.Cut(k, "@")
	clusterName, step, _ = strings.Cut(rest, "/")
	return component, clusterName, step
}

// healthStep is the step an entry's health is judged in: its own when the
// version being kept runs its workflow step by step, else none.
func (s *scope) healthStep(e v1beta1.ManagedResource) string {
	if s.flow == nil {
		return ""
	}
	return e.Step
}

// stepGroup is the entries of one cluster and one workflow step.
type stepGroup struct {
	cluster, step string
	entries       []v1beta1.ManagedResource
}

// byClusterAndStep groups entries by cluster and, when the version runs
// its workflow step by step, by step, in first-seen order.
func (s *scope) byClusterAndStep(entries []v1beta1.ManagedResource) []stepGroup {
	var out []stepGroup
	for _, g := range byCluster(entries) {
		idx := map[string]int{}
		for _, e := range g.entries {
			step := s.healthStep(e)
			i, ok := idx[step]
			if !ok {
				i = len(out)
				idx[step] = i
				out = append(out, stepGroup{cluster: g.cluster, step: step})
			}
			out[i].entries = append(out[i].entries, e)
		}
	}
	return out
}

// healthOf evaluates one component: its own policy, then each trait's. A
// PostDispatch trait not rendered yet (pending says so) is reported
// pending and not judged, as in KubeVela.
func (r *Reconciler) healthOf(s *scope, defs render.Definitions, comp v1beta1.ApplicationComponent, actx render.AppContext,
	manifests, live []*unstructured.Unstructured, pending func(trait string) (bool, string)) (componentHealth, error) {
	var workload *unstructured.Unstructured
	hasWorkload := false
	outputs := map[string]*unstructured.Unstructured{}
	traitOutputs := map[string]map[string]*unstructured.Unstructured{}
	for i, m := range manifests {
		trait, name := render.OutputOf(m)
		switch {
		case trait == "" && name == "":
			workload, hasWorkload = live[i], true
		case trait == "":
			outputs[name] = live[i]
		default:
			if traitOutputs[trait] == nil {
				traitOutputs[trait] = map[string]*unstructured.Unstructured{}
			}
			traitOutputs[trait][name] = live[i]
		}
	}
	var h componentHealth
	def := defs.Components[comp.Type]
	if r.Options.KstatusHealth && (def == nil || def.Spec.Status == nil || def.Spec.Status.HealthPolicy == "") {
		var objs []*unstructured.Unstructured
		if hasWorkload {
			objs = append(objs, workload)
		}
		h.Health = kstatusAll(append(objs, values(outputs)...))
	} else {
		var err error
		if h.Health, err = r.Renderer.ComponentHealth(def, comp, actx, s.app, workload, outputs); errors.Is(err, cueeval.ErrUnavailable) {
			return h, err
		}
	}
	h.workloadHealthy = h.Healthy
	for _, t := range comp.Traits {
		if wait, msg := pending(t.Type); wait {
			h.traits = append(h.traits, v1beta1.ApplicationTraitStatus{Type: t.Type, Pending: true, Message: msg})
			continue
		}
		tdef := defs.Traits[t.Type]
		var th render.Health
		if r.Options.KstatusHealth && (tdef == nil || tdef.Spec.Status == nil || tdef.Spec.Status.HealthPolicy == "") {
			th = kstatusAll(values(traitOutputs[render.TypeLabel(t.Type)]))
		} else {
			var err error
			if th, err = r.Renderer.TraitHealth(tdef, t, comp, actx, s.app, workload, traitOutputs[render.TypeLabel(t.Type)]); errors.Is(err, cueeval.ErrUnavailable) {
				return h, err
			}
		}
		h.traits = append(h.traits, v1beta1.ApplicationTraitStatus{Type: t.Type, Healthy: th.Healthy, Message: th.Message, Details: th.Details})
		if !th.Healthy {
			h.Healthy = false
			if h.Message == "" {
				h.Message = "trait " + t.Type + ": " + th.Message
			}
			if h.Reason == "" {
				h.Reason = th.Reason
			}
		}
	}
	return h, nil
}

// liveOrNil returns the live object StateKeep read for an entry.
func (r *Reconciler) liveOrNil(s *scope, e v1beta1.ManagedResource) *unstructured.Unstructured {
	return s.keep.live[tracker.KeyOf(e)]
}

// componentManifests returns the recorded manifests of a component, in
// entry order.
func componentManifests(entries []v1beta1.ManagedResource, component string) []*unstructured.Unstructured {
	out, _ := manifestsAndWorkload(entries, component)
	return out
}

// hasManifests reports whether entries hold a manifest of component that
// manifestsAndWorkload would decode.
func hasManifests(entries []v1beta1.ManagedResource, component string) bool {
	return slices.ContainsFunc(entries, func(e v1beta1.ManagedResource) bool {
		return e.Component == component && inventory.Applies(e)
	})
}

// manifestsAndWorkload is componentManifests with the component's
// workload entry (nil when it has none).
func manifestsAndWorkload(entries []v1beta1.ManagedResource, component string) ([]*unstructured.Unstructured, *v1beta1.ManagedResource) {
	var out []*unstructured.Unstructured
	var workload *v1beta1.ManagedResource
	for i, e := range entries {
		if e.Component != component || e.Deleted || e.Data == nil {
			continue
		}
		m, err := tracker.Manifest(e)
		if err != nil || m == nil {
			continue
		}
		if trait, name := render.OutputOf(m); workload == nil && e.Trait == "" && trait == "" && name == "" {
			workload = &entries[i]
		}
		out = append(out, m)
	}
	return out, workload
}

// kstatusAll is healthy when every object is ready by kstatus rules. The
// message names the first object that is not, in the order given: callers
// pass a stable order so that the same facts give the same message, and a
// steady state writes no status and emits no event.
func kstatusAll(objs []*unstructured.Unstructured) render.Health {
	for _, o := range objs {
		if o == nil {
			return render.Health{Message: "an object does not exist"}
		}
		if h := render.KstatusHealth(o); !h.Healthy {
			h.Message = o.GetKind() + " " + o.GetName() + ": " + h.Message
			return h
		}
	}
	return render.Health{Healthy: true}
}

// values returns the objects of m in key order, never in map order.
func values(m map[string]*unstructured.Unstructured) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[k])
	}
	return out
}

// healthContext is what health policies read of the version being kept.
func (r *Reconciler) healthContext(s *scope) render.AppContext {
	return render.AppContext{
		AppRevision:    liveRevision(s.app, s.current).Name,
		AppRevisionNum: s.current.Spec.ApplicationGeneration,
		PublishVersion: s.app.Annotations[v1beta1.AnnotationPublishVersion],
		ClusterVersion: r.ClusterVersion,
	}
}
