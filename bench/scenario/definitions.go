package scenario

import (
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/bench/measure"
	"github.com/steward-oam/steward/bench/record"
)

const benchDefinition = "bench-versioned"

func versionedTemplate(version int) string {
	return fmt.Sprintf(`output: {
	apiVersion: "v1"
	kind:       "ConfigMap"
	metadata: name: context.name
	data: {definition: "%d", replicas: "\(parameter.replicas)"}
}
parameter: replicas: *1 | int
`, version)
}

// definitions runs the scenario for Steward's controllers.
func (r *runner) definitions(ctx context.Context, s *session) error {
	if !strings.HasPrefix(s.controller.Name, "steward") {
		s.progress("skipped: %s has no definition revisions or admission", s.controller.Name)
		return nil
	}
	cfg := r.opts.Profile.Definitions
	port, err := freePort()
	if err != nil {
		return err
	}
	certDir, err := os.MkdirTemp("", "steward-bench-webhook-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(certDir)
	s.controller.Command += fmt.Sprintf(" --use-webhook --webhook-host=127.0.0.1 --webhook-port=%d --webhook-url=https://127.0.0.1:%d --webhook-cert-dir=%s",
		port, port, certDir)
	c := s.cp.Client
	create := func(ctx context.Context) error {
		for _, ns := range []string{benchNamespace, "vela-system"} {
			if err := EnsureNamespace(ctx, c, ns); err != nil {
				return err
			}
		}
		def := &v1beta1.ComponentDefinition{ObjectMeta: metav1.ObjectMeta{Namespace: benchNamespace, Name: benchDefinition},
			Spec: v1beta1.ComponentDefinitionSpec{Workload: v1beta1.WorkloadTypeDescriptor{Definition: v1beta1.WorkloadGVK{APIVersion: "v1", Kind: "ConfigMap"}},
				Schematic: &v1beta1.Schematic{CUE: &v1beta1.CUE{Template: versionedTemplate(0)}}}}
		if err := c.Create(ctx, def); err != nil {
			return err
		}
		return parallel(ctx, cfg.Apps, 16, func(i int) error {
			app := &v1beta1.Application{}
			app.Name, app.Namespace = AppName(i), benchNamespace
			if i < cfg.AutoUpdate {
				app.Annotations = map[string]string{v1beta1.AnnotationAutoUpdate: "true"}
			}
			app.Spec.Components = []v1beta1.ApplicationComponent{{Name: AppName(i), Type: benchDefinition,
				Properties: &runtime.RawExtension{Raw: []byte(`{"replicas":1}`)}}}
			return c.Create(ctx, app)
		})
	}
	if _, err := s.convergeWith(ctx, cfg.Apps, cfg.Timeout.D(), r.opts.QPS, r.opts.Burst, create); err != nil {
		return err
	}
	res := record.DefinitionsResult{Controller: s.controller.Name, Apps: cfg.Apps, AutoUpdate: cfg.AutoUpdate, Changes: cfg.Changes}
	if res.HeapBefore, err = s.proc.HeapAfterGC(ctx); err != nil {
		return err
	}
	base, err := s.cp.Requests(ctx)
	if err != nil {
		return err
	}
	ownBase := s.cp.Own.Snapshot()
	for v := 1; v <= cfg.Changes; v++ {
		start := time.Now()
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			def := &v1beta1.ComponentDefinition{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: benchNamespace, Name: benchDefinition}, def); err != nil {
				return err
			}
			def.Spec.Schematic.CUE.Template = versionedTemplate(v)
			return c.Update(ctx, def)
		})
		if err != nil {
			return err
		}
		if err := waitDelivered(ctx, c, cfg.AutoUpdate, v, cfg.Timeout.D()); err != nil {
			return fmt.Errorf("change %d: %w", v, err)
		}
		res.ChangeLatency = append(res.ChangeLatency, record.Duration(time.Since(start)))
	}
	// A re-sync period's worth of quiet would show a late re-render of a
	// plain Application; the count below reads what is there now.
	work, err := s.work(ctx, base, ownBase)
	if err != nil {
		return err
	}
	res.ChangeRequests = work.Filter(measure.IsWork).Total()
	if res.HeapAfter, err = s.proc.HeapAfterGC(ctx); err != nil {
		return err
	}
	var cms corev1.ConfigMapList
	if err := c.List(ctx, &cms, client.InNamespace(benchNamespace)); err != nil {
		return err
	}
	for _, cm := range cms.Items {
		var i int
		if _, err := fmt.Sscanf(cm.Name, "app-%d", &i); err == nil && i >= cfg.AutoUpdate && cm.Data["definition"] != "0" {
			res.PlainRerendered++
		}
	}
	var revs v1beta1.DefinitionRevisionList
	if err := c.List(ctx, &revs, client.InNamespace(benchNamespace), client.MatchingLabels{v1beta1.LabelComponentDefinitionName: benchDefinition}); err != nil {
		return err
	}
	res.Revisions = len(revs.Items)
	if err := r.admissions(ctx, s, cfg, &res); err != nil {
		return err
	}
	r.res.Definitions = append(r.res.Definitions, res)
	s.progress("%d apps (%d autoUpdate): %d changes delivered in %v; %.0f requests; plain apps re-rendered %d; revisions %d; heap %s → %s; admission p50 %s p95 %s p99 %s max %s",
		cfg.Apps, cfg.AutoUpdate, cfg.Changes, res.ChangeLatency, res.ChangeRequests, res.PlainRerendered, res.Revisions,
		mibText(res.HeapBefore.HeapInuse), mibText(res.HeapAfter.HeapInuse), res.AdmissionP50.D(), res.AdmissionP95.D(), res.AdmissionP99.D(), res.AdmissionMax.D())
	return nil
}

// admissions times dry-run creates of valid Applications once the
// webhook refuses an invalid one (until then the API server admits
// everything: failurePolicy Ignore).
func (r *runner) admissions(ctx context.Context, s *session, cfg record.DefinitionsConfig, res *record.DefinitionsResult) error {
	c := s.cp.Client
	probe := &v1beta1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: benchNamespace, Name: "probe"}}
	probe.Spec.Components = []v1beta1.ApplicationComponent{{Name: "c", Type: "no-such-type"}}
	deadline := time.Now().Add(time.Minute)
	for c.Create(ctx, probe.DeepCopy(), client.DryRunAll) == nil {
		if time.Now().After(deadline) {
			return fmt.Errorf("the webhook never refused an unknown type")
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
	var took []time.Duration
	for i := range cfg.Admissions {
		app := &v1beta1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: benchNamespace, Name: fmt.Sprintf("admitted-%04d", i)}}
		app.Spec.Components = []v1beta1.ApplicationComponent{
			{Name: "web", Type: benchDefinition, Properties: &runtime.RawExtension{Raw: []byte(fmt.Sprintf(`{"replicas":%d}`, 1+i%5))}},
			{Name: "worker", Type: benchDefinition, Properties: &runtime.RawExtension{Raw: []byte(`{"replicas":2}`)}},
		}
		start := time.Now()
		if err := c.Create(ctx, app, client.DryRunAll); err != nil {
			return fmt.Errorf("a valid Application was refused: %w", err)
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	q := func(p float64) record.Duration {
		return record.Duration(took[min(len(took)-1, int(p*float64(len(took))))])
	}
	res.AdmissionP50, res.AdmissionP95, res.AdmissionP99, res.AdmissionMax = q(0.5), q(0.95), q(0.99), record.Duration(took[len(took)-1])
	return nil
}

// waitDelivered waits until the first n Applications' ConfigMaps say
// definition version v.
func waitDelivered(ctx context.Context, c client.Client, n, v int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	want := fmt.Sprint(v)
	for {
		var cms corev1.ConfigMapList
		if err := c.List(ctx, &cms, client.InNamespace(benchNamespace)); err != nil {
			return err
		}
		done := 0
		for _, cm := range cms.Items {
			var i int
			if _, err := fmt.Sscanf(cm.Name, "app-%d", &i); err == nil && i < n && cm.Data["definition"] == want {
				done++
			}
		}
		if done == n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d autoUpdate Applications delivered definition %d", done, n, v)
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
