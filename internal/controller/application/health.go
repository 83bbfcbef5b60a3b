package application

import (
	"context"
	"errors"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/application/facts"
	"github.com/steward-oam/steward/internal/controller/application/memory"
	"github.com/steward-oam/steward/internal/controller/application/record"
	"github.com/steward-oam/steward/internal/controller/application/status"
	"github.com/steward-oam/steward/internal/cueeval"
	"github.com/steward-oam/steward/internal/inventory"
	"github.com/steward-oam/steward/internal/render"
	"github.com/steward-oam/steward/internal/tracker"
)

// evaluateHealth runs each component's health policy over the live objects
// StateKeep just read: no object is read again. A component with no
// policy is healthy, as in KubeVela; with --kstatus-health, built-in kinds
// without a policy use kstatus readiness instead.
func (r *Reconciler) evaluateHealth(ctx context.Context, s *facts.Pass) error {
	if s.Current == nil || !s.Keep.Ran {
		return nil
	}
	// Objects a garbage-collect rule keeps in the root tracker are part of
	// their component too.
	entries, err := inventory.AppliedOf(s.Current, s.Root)
	if err != nil {
		return nil
	}
	// Objects of workflow steps not reached yet are not this version's
	// yet: their components are judged once they are applied.
	entries = slices.DeleteFunc(entries, s.GatedEntry)
	res := r.resolver()
	res.NoCopy = true // health and PostDispatch traits only read them
	defs, err := res.Resolve(ctx, s.App)
	if err != nil {
		s.SetRetry(err)
		return err
	}
	unread := make(map[tracker.Key]string, len(s.Keep.Unread))
	for _, u := range s.Keep.Unread {
		unread[u.Key] = u.ResourceVersion
	}
	actx := r.healthContext(s)
	app := client.ObjectKeyFromObject(s.App)
	var cached []memory.CachedHealth
	s.Health = map[string]facts.ComponentHealth{}
	s.Workloads, s.Defs = nil, defs
	for _, comp := range s.App.Spec.Components {
		// dispatchPostTraits renders over the workload of a component
		// with PostDispatch traits.
		post := record.PostDispatchTraits(comp, defs) != nil
		for _, g := range s.ByClusterAndStep(entries) {
			if !facts.HasManifests(g.Entries, comp.Name) {
				continue
			}
			k := facts.HealthKey(comp.Name, g.Cluster, g.Step)
			workload := func(wl *v1beta1.ManagedResource) {
				if wl != nil && post {
					s.Workloads = append(s.Workloads, facts.PlacedWorkload{Key: k, Component: comp.Name, Cluster: g.Cluster, Step: g.Step, Entry: *wl})
				}
			}
			fp := memory.HealthFingerprint(s, defs, comp, g.Entries, unread)
			if h, ok := r.HealthCache.Get(app, k, fp); ok {
				// A health kept is reused without decoding a manifest.
				workload(h.WorkloadIn(g.Entries))
				s.Health[k] = h.Health
				cached = append(cached, h)
				continue
			}
			manifests, wl := facts.ManifestsAndWorkload(g.Entries, comp.Name)
			if len(manifests) == 0 {
				continue
			}
			workload(wl)
			read, complete := r.readUnread(ctx, s, comp.Name, g.Entries, unread)
			var live []*unstructured.Unstructured
			for _, e := range g.Entries {
				if e.Component == comp.Name && !e.Deleted && e.Data != nil {
					live = append(live, r.liveOrNil(s, e))
				}
			}
			pending := func(trait string) (bool, string) { return pendingTrait(s, defs, k, trait) }
			h, err := r.healthOf(s, defs, comp, actx, manifests, live, pending)
			if err != nil {
				// No evaluator (the controller is stopping): nothing is
				// known of health; the pass stops and is retried.
				return err
			}
			s.Health[k] = h
			if read > 0 {
				// Objects read just now carry their own resourceVersions.
				fp = memory.HealthFingerprint(s, defs, comp, g.Entries, unread)
			}
			// A health the budget stopped is not kept: the evaluators
			// remember the failure and answer it again at no cost until its
			// back-off ends, then evaluate it once more.
			if complete && s.Health[k].Reason == "" {
				cached = append(cached, memory.CachedHealth{Key: k, Fingerprint: fp, Health: s.Health[k], Workload: memory.WorkloadKey(wl, post)})
			}
		}
	}
	r.HealthCache.Put(app, cached)
	return nil
}

// healthOf evaluates one component: its own policy, then each trait's. A
// PostDispatch trait not rendered yet (pending says so) is reported
// pending and not judged, as in KubeVela.
func (r *Reconciler) healthOf(s *facts.Pass, defs render.Definitions, comp v1beta1.ApplicationComponent, actx render.AppContext,
	manifests, live []*unstructured.Unstructured, pending func(trait string) (bool, string)) (facts.ComponentHealth, error) {
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
	var h facts.ComponentHealth
	def := defs.Components[comp.Type]
	if r.Options.KstatusHealth && (def == nil || def.Spec.Status == nil || def.Spec.Status.HealthPolicy == "") {
		var objs []*unstructured.Unstructured
		if hasWorkload {
			objs = append(objs, workload)
		}
		h.Health = facts.KstatusAll(append(objs, facts.Values(outputs)...))
	} else {
		var err error
		if h.Health, err = r.Renderer.ComponentHealth(def, comp, actx, s.App, workload, outputs); errors.Is(err, cueeval.ErrUnavailable) {
			return h, err
		}
	}
	h.WorkloadHealthy = h.Healthy
	for _, t := range comp.Traits {
		if wait, msg := pending(t.Type); wait {
			h.Traits = append(h.Traits, v1beta1.ApplicationTraitStatus{Type: t.Type, Pending: true, Message: msg})
			continue
		}
		tdef := defs.Traits[t.Type]
		var th render.Health
		if r.Options.KstatusHealth && (tdef == nil || tdef.Spec.Status == nil || tdef.Spec.Status.HealthPolicy == "") {
			th = facts.KstatusAll(facts.Values(traitOutputs[render.TypeLabel(t.Type)]))
		} else {
			var err error
			if th, err = r.Renderer.TraitHealth(tdef, t, comp, actx, s.App, workload, traitOutputs[render.TypeLabel(t.Type)]); errors.Is(err, cueeval.ErrUnavailable) {
				return h, err
			}
		}
		h.Traits = append(h.Traits, v1beta1.ApplicationTraitStatus{Type: t.Type, Healthy: th.Healthy, Message: th.Message, Details: th.Details})
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
func (r *Reconciler) liveOrNil(s *facts.Pass, e v1beta1.ManagedResource) *unstructured.Unstructured {
	return s.Keep.Live[tracker.KeyOf(e)]
}

// healthContext is what health policies read of the version being kept.
func (r *Reconciler) healthContext(s *facts.Pass) render.AppContext {
	return render.AppContext{
		AppRevision:    status.LiveRevision(s.App, s.Current).Name,
		AppRevisionNum: s.Current.Spec.ApplicationGeneration,
		PublishVersion: s.App.Annotations[v1beta1.AnnotationPublishVersion],
		ClusterVersion: r.ClusterVersion,
	}
}

// getLive reads the live object of an entry.
func getLive(ctx context.Context, c client.Client, e v1beta1.ManagedResource) (*unstructured.Unstructured, error) {
	live := tracker.Ref(e)
	if err := c.Get(ctx, client.ObjectKeyFromObject(live), live); err != nil {
		return nil, err
	}
	return live, nil
}

// readUnread reads the objects of a component that watch mode skipped,
// because its health must be evaluated again, and returns how many it
// read. complete is false when one could not be read: the health is then
// not cached.
func (r *Reconciler) readUnread(ctx context.Context, s *facts.Pass, comp string, entries []v1beta1.ManagedResource, unread map[tracker.Key]string) (read int, complete bool) {
	ok := true
	for _, e := range entries {
		key := tracker.KeyOf(e)
		if _, skipped := unread[key]; !skipped || e.Component != comp || s.Keep.Live[key] != nil {
			continue
		}
		c, err := s.Clients.GetClient(ctx, e.Cluster)
		if err != nil {
			ok = false
			continue
		}
		live, err := getLive(ctx, c, e)
		if err != nil {
			ok = false
			continue
		}
		s.Keep.Remember(key, live)
		read++
	}
	return read, ok
}
