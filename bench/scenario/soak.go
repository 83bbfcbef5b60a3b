package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/bench/measure"
	"github.com/steward-oam/steward/bench/record"
)

// soakReplicas is the scaler trait's replica count in the soak apps.
const soakReplicas = 2

// NewSoakApplication is the soak scenario's Application, as a new user
// writes one with the built-in definitions only: a webservice with the
// scaler, expose and labels traits.
func NewSoakApplication(namespace, name string, annotations map[string]string) (*v1beta1.Application, error) {
	raw := func(v any) (*runtime.RawExtension, error) {
		data, err := json.Marshal(v)
		return &runtime.RawExtension{Raw: data}, err
	}
	props, err := raw(map[string]any{
		"image": "registry.example.com/shop/" + name + ":1.4.2",
		"ports": []map[string]any{{"port": 8080}},
		"env":   []map[string]any{{"name": "LOG_LEVEL", "value": "info"}},
		"cpu":   "250m", "memory": "256Mi",
	})
	if err != nil {
		return nil, err
	}
	comp := v1beta1.ApplicationComponent{Name: name, Type: "webservice", Properties: props}
	for _, t := range []struct {
		kind  string
		props any
	}{
		{"scaler", map[string]any{"replicas": soakReplicas}},
		{"expose", map[string]any{"port": []int{8080}}},
		{"labels", map[string]any{"team": "shop", "tier": "web"}},
	} {
		p, err := raw(t.props)
		if err != nil {
			return nil, err
		}
		comp.Traits = append(comp.Traits, v1beta1.ApplicationTrait{Type: t.kind, Properties: p})
	}
	return &v1beta1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Annotations: annotations},
		Spec:       v1beta1.ApplicationSpec{Components: []v1beta1.ApplicationComponent{comp}},
	}, nil
}

// soak re-syncs webservice apps for a long time and reads the heap after
// a forced collection every SampleEvery: memory that grows with passes
// shows as a rising line, memory bounded by what is managed as a flat one.
// The memory of the controller's child processes (Steward's CUE
// evaluators) is read at the same moments, and must stay flat too; the
// CPU of the whole process tree is divided by the reconciles of the soak.
// A heap profile read after the last point is written to the log
// directory and summed by package: where the level of the heap lies.
func (r *runner) soak(ctx context.Context, s *session) error {
	cfg := r.opts.Profile.Soak
	if !s.controller.ServesPprof() {
		return fmt.Errorf("the soak reads heap after a forced GC from /debug/pprof/heap?gc=1: add --pprof-addr=%s to the command line of %s", record.PlaceholderPprofAddr, s.controller.Name)
	}
	if err := EnsureNamespace(ctx, s.cp.Client, benchNamespace); err != nil {
		return err
	}
	ann := map[string]string{v1beta1.AnnotationReconcileInterval: cfg.Interval.D().String()}
	err := parallel(ctx, cfg.Apps, 16, func(i int) error {
		app, err := NewSoakApplication(benchNamespace, AppName(i), ann)
		if err != nil {
			return err
		}
		if err := s.cp.Client.Create(ctx, app); err != nil {
			return fmt.Errorf("creating application %s: %w", app.Name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := s.start(ctx); err != nil {
		return err
	}
	if err := waitHealthy(ctx, s.cp.Client, cfg.Apps, 5*time.Minute); err != nil {
		return err
	}
	res := record.SoakResult{Controller: s.controller.Name, Apps: cfg.Apps, Interval: cfg.Interval, Duration: cfg.Duration}
	start := time.Now()
	var base measure.Usage
	for i := 0; ; i++ {
		if err := sleep(ctx, time.Until(start.Add(time.Duration(i)*cfg.SampleEvery.D()))); err != nil {
			return err
		}
		h, err := s.proc.HeapAfterGC(ctx)
		if err != nil {
			return err
		}
		used, err := s.proc.Usage(ctx)
		if err != nil {
			return err
		}
		children, err := s.proc.ChildMemory()
		if err != nil {
			return err
		}
		if i == 0 {
			base = used
		}
		cost := used.CostSince(base)
		p := record.SoakPoint{Minute: time.Since(start).Minutes(), HeapInuse: h.HeapInuse, HeapAlloc: h.HeapAlloc, RSS: h.RSS,
			Reconciles: cost.Reconciles,
			Children:   children.Processes, ChildRSS: children.RSS, ChildRSSAnon: children.RSSAnon}
		res.Points = append(res.Points, p)
		res.CPUCost = cost
		s.progress("minute %.0f: heap in use after GC %.1f MiB (live %.1f MiB), RSS %.1f MiB, %.0f reconciles; "+
			"%d child processes, RSS %.1f MiB (anon %.1f MiB); CPU %.2f ms per reconcile",
			p.Minute, p.HeapInuse/mib, p.HeapAlloc/mib, p.RSS/mib, p.Reconciles, p.Children, p.ChildRSS/mib, p.ChildRSSAnon/mib,
			res.CPUPerReconcileMs)
		if time.Duration(i)*cfg.SampleEvery.D() >= cfg.Duration.D() {
			break
		}
	}
	// A heap profile that cannot be read loses its summary, not the soak.
	profile := filepath.Join(r.opts.LogDir, s.scenario+"-"+s.controller.Name+"-heap.pprof")
	if pkgs, err := s.proc.HeapProfile(ctx, profile); err != nil {
		s.progress("no heap profile: %v", err)
	} else {
		res.HeapProfile, res.HeapByPackage = profile, pkgs
		s.progress("heap profile %s: top in-use heap by package: %s", profile, record.HeapPackagesText(pkgs, 5))
	}
	r.res.Soak = append(r.res.Soak, res)
	return nil
}

// waitHealthy plays the Deployment controller, which the benchmark's
// control plane does not run: it marks every Deployment of the bench
// namespace rolled out (what the webservice health policy checks), until
// want Applications are Ready.
func waitHealthy(ctx context.Context, c client.Client, want int, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		var deps appsv1.DeploymentList
		if err := c.List(ctx, &deps, client.InNamespace(benchNamespace)); err != nil {
			return fmt.Errorf("listing deployments: %w", err)
		}
		for i := range deps.Items {
			if err := markRolledOut(ctx, c, &deps.Items[i]); err != nil {
				return err
			}
		}
		var apps v1beta1.ApplicationList
		if err := c.List(ctx, &apps, client.InNamespace(benchNamespace)); err != nil {
			return fmt.Errorf("listing applications: %w", err)
		}
		ready := 0
		for i := range apps.Items {
			if IsReady(&apps.Items[i]) {
				ready++
			}
		}
		if ready >= want {
			return nil
		}
		if err := sleep(ctx, 2*time.Second); err != nil {
			return fmt.Errorf("%d of %d applications ready: %w", ready, want, err)
		}
	}
}

// markRolledOut writes the status a Deployment controller would once every
// replica is up.
func markRolledOut(ctx context.Context, c client.Client, d *appsv1.Deployment) error {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	st := d.Status
	if st.ObservedGeneration == d.Generation && st.ReadyReplicas == want && st.UpdatedReplicas == want && st.Replicas == want {
		return nil
	}
	before := d.DeepCopy()
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: want, ReadyReplicas: want,
		UpdatedReplicas: want, AvailableReplicas: want}
	if err := c.Status().Patch(ctx, d, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("marking deployment %s rolled out: %w", d.Name, err)
	}
	return nil
}
