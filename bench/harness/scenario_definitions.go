package harness

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
)

// ScenarioDefinitions measures definition revisions and admission (issue
// 33): what a definition change costs while a fleet uses it, and how long
// `kubectl apply` of a valid Application waits for the webhook.
const ScenarioDefinitions = "definitions"

// DefinitionsConfig sizes the definitions scenario: Apps Applications of
// one ComponentDefinition, AutoUpdate of them annotated
// app.oam.dev/autoUpdate; the definition is changed Changes times; then
// Admissions valid Applications are created with server-side dry run.
type DefinitionsConfig struct {
	Apps       int      `json:"apps"`
	AutoUpdate int      `json:"autoUpdate"`
	Changes    int      `json:"changes"`
	Admissions int      `json:"admissions"`
	Timeout    Duration `json:"timeout"`
}

// DefinitionsResult is one controller's run of the scenario.
type DefinitionsResult struct {
	Controller string `json:"controller"`
	Apps       int    `json:"apps"`
	AutoUpdate int    `json:"autoUpdate"`
	Changes    int    `json:"changes"`
	// Revisions is the DefinitionRevisions of the definition at the end.
	Revisions int `json:"revisions"`
	// ChangeLatency is, per change, the time until every autoUpdate
	// Application delivered it.
	ChangeLatency []Duration `json:"changeLatency"`
	// ChangeRequests are the controller's requests over all changes, and
	// PlainRerendered the Applications without autoUpdate that delivered a
	// change (0 when a change costs only the Applications that use it).
	ChangeRequests  float64 `json:"changeRequests"`
	PlainRerendered int     `json:"plainRerendered"`
	// Heap after a forced collection before the first change and after
	// the last.
	HeapBefore HeapStats `json:"heapBefore"`
	HeapAfter  HeapStats `json:"heapAfter"`
	// Admission latencies of a valid Application (dry-run create through
	// the API server and the webhook).
	AdmissionP50 Duration `json:"admissionP50"`
	AdmissionP95 Duration `json:"admissionP95"`
	AdmissionP99 Duration `json:"admissionP99"`
	AdmissionMax Duration `json:"admissionMax"`
}

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
	res := DefinitionsResult{Controller: s.controller.Name, Apps: cfg.Apps, AutoUpdate: cfg.AutoUpdate, Changes: cfg.Changes}
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
		res.ChangeLatency = append(res.ChangeLatency, Duration(time.Since(start)))
	}
	// A re-sync period's worth of quiet would show a late re-render of a
	// plain Application; the count below reads what is there now.
	work, err := s.work(ctx, base, ownBase)
	if err != nil {
		return err
	}
	res.ChangeRequests = work.Filter(isWork).Total()
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
func (r *runner) admissions(ctx context.Context, s *session, cfg DefinitionsConfig, res *DefinitionsResult) error {
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
	q := func(p float64) Duration { return Duration(took[min(len(took)-1, int(p*float64(len(took))))]) }
	res.AdmissionP50, res.AdmissionP95, res.AdmissionP99, res.AdmissionMax = q(0.5), q(0.95), q(0.99), Duration(took[len(took)-1])
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

// definitionsSection reports the definitions scenario.
func definitionsSection(res *Results) string {
	if len(res.Definitions) == 0 {
		return ""
	}
	d0 := res.Definitions[0]
	var b strings.Builder
	fmt.Fprintf(&b, "## Definition revisions and admission\n\n")
	fmt.Fprintf(&b, "%s Applications of one ComponentDefinition (a ConfigMap each), %d of them annotated\n", thousands(d0.Apps), d0.AutoUpdate)
	fmt.Fprintf(&b, "`app.oam.dev/autoUpdate: \"true\"`. The definition is then changed %d times; each change is timed until every\n", d0.Changes)
	fmt.Fprintf(&b, "autoUpdate Application delivered it (the controller waits 3 s after a change to gather a burst). Requests are\n")
	fmt.Fprintf(&b, "the controller's over all changes: they grow with the autoUpdate Applications, not the fleet; plain\n")
	fmt.Fprintf(&b, "Applications keep what they rendered (the column counts those that did not). Revisions are the\n")
	fmt.Fprintf(&b, "DefinitionRevisions at the end (one per spec). Then valid two-component Applications are created with\n")
	fmt.Fprintf(&b, "server-side dry run through the API server and the webhook: what `kubectl apply` waits for.\n\n")
	headers := []string{"controller", "apps (autoUpdate)", "changes", "per change", "requests", "plain re-rendered", "revisions", "heap before → after", "admission p50 / p95 / p99 / max"}
	var rows [][]string
	for _, d := range res.Definitions {
		var lat []string
		for _, l := range d.ChangeLatency {
			lat = append(lat, secs(l))
		}
		rows = append(rows, []string{d.Controller, fmt.Sprintf("%s (%d)", thousands(d.Apps), d.AutoUpdate), fmt.Sprint(d.Changes),
			strings.Join(lat, ", "), fmt.Sprintf("%.0f", d.ChangeRequests), fmt.Sprint(d.PlainRerendered), fmt.Sprint(d.Revisions),
			mibText(d.HeapBefore.HeapInuse) + " → " + mibText(d.HeapAfter.HeapInuse),
			fmt.Sprintf("%s / %s / %s / %s", ms(d.AdmissionP50), ms(d.AdmissionP95), ms(d.AdmissionP99), ms(d.AdmissionMax))})
	}
	b.WriteString(table(headers, rows))
	b.WriteString("\n")
	return b.String()
}

func ms(d Duration) string { return fmt.Sprintf("%.1f ms", float64(d.D().Microseconds())/1000) }
