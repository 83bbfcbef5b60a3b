package scenario

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/bench/record"
	"github.com/steward-oam/steward/internal/helm/chart/charttest"
)

// HelmObjectsPerApp is what benchChart renders, plus the release
// summary: the fleet scenario's shape of 8 (a Deployment, a Service and
// six ConfigMaps), so that the two compare object for object.
const HelmObjectsPerApp = 8

// benchChart is a chart of a Deployment, a Service and five ConfigMaps,
// named after the release.
func benchChart() []byte {
	return charttest.Archive("bench-app", "1.0.0", map[string]string{
		"values.yaml": "image: nginx:1.27\nreplicas: 1\nport: 80\nconfigMaps: 5\n",
		"templates/configmaps.yaml": `{{- range $i := until (int .Values.configMaps) }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ $.Release.Name }}-{{ $i }}
data:
  index: {{ $i | quote }}
{{- end }}
`,
		"templates/app.yaml": `apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}
spec:
  selector: {app: {{ .Release.Name }}}
  ports: [{port: {{ .Values.port }}}]
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  replicas: {{ .Values.replicas }}
  selector: {matchLabels: {app: {{ .Release.Name }}}}
  template:
    metadata: {labels: {app: {{ .Release.Name }}}}
    spec:
      containers: [{name: app, image: {{ .Values.image | quote }}}]
`,
	})
}

// helm runs the helm scenario for Steward's controllers (the others do
// not render helmchart components).
func (r *runner) helm(ctx context.Context, s *session) error {
	if !strings.HasPrefix(s.controller.Name, "steward") {
		s.progress("skipped: %s does not deliver helmchart components", s.controller.Name)
		return nil
	}
	cfg := r.opts.Profile.Helm
	repo := charttest.NewRepo()
	defer repo.Close()
	repo.Add(benchChart())
	create := func(ctx context.Context) error {
		if err := EnsureNamespace(ctx, s.cp.Client, benchNamespace); err != nil {
			return err
		}
		return parallel(ctx, cfg.Apps, 16, func(i int) error {
			name := AppName(i)
			props := fmt.Sprintf(`{"chart":{"source":"bench-app","repoURL":%q,"version":"1.0.0"},"values":{"replicas":%d}}`, repo.URL(), 1+i%3)
			app := &v1beta1.Application{}
			app.Name, app.Namespace = name, benchNamespace
			app.Spec.Components = []v1beta1.ApplicationComponent{{Name: name, Type: "helmchart", Properties: &runtime.RawExtension{Raw: []byte(props)}}}
			return s.cp.Client.Create(ctx, app)
		})
	}
	c, err := s.convergeWith(ctx, cfg.Apps, cfg.Timeout.D(), r.opts.QPS, r.opts.Burst, create)
	if err != nil {
		return err
	}
	samples, err := s.proc.Metrics(ctx)
	if err != nil {
		return err
	}
	heap, err := s.proc.HeapAfterGC(ctx)
	if err != nil {
		return err
	}
	kind, bound := busiestKind(c.work, r.opts.QPS, r.opts.Burst)
	res := record.HelmResult{
		Controller: s.controller.Name, Apps: cfg.Apps, Resources: cfg.Apps * HelmObjectsPerApp, QPS: r.opts.QPS, Burst: r.opts.Burst,
		Converged: record.Duration(c.took), Requests: c.work.List(), Work: c.work.Total(), Bound: record.Duration(bound), BusiestKind: kind,
		Downloads: repo.Downloads.Load(), IndexReads: repo.Requests.Load() - repo.Downloads.Load(),
		Cache: map[string]float64{}, Heap: heap, CPUCost: c.cost,
	}
	for _, result := range []string{"hit", "miss", "fetch", "error"} {
		res.Cache[result] = samples.Sum("steward_helm_chart_cache_total", map[string]string{"result": result})
	}
	for _, stage := range []string{"render", "apply", "statekeep", "health", "gc", "status"} {
		n := samples.Sum("steward_reconcile_stage_duration_seconds_count", map[string]string{"stage": stage})
		sum := samples.Sum("steward_reconcile_stage_duration_seconds_sum", map[string]string{"stage": stage})
		if n > 0 {
			s.progress("stage %s: %.0f passes, mean %.1f ms", stage, n, sum/n*1000)
		}
	}
	r.res.Helm = append(r.res.Helm, res)
	s.progress("%d helmchart apps ready after %s; %.0f requests, bound %s by %s (%.2f×); chart downloaded %d× (index %d×), cache %v; heap after GC %s",
		cfg.Apps, res.Converged.D().Round(time.Millisecond), res.Work, res.Bound.D().Round(time.Millisecond), kind, res.Ratio(),
		res.Downloads, res.IndexReads, res.Cache, mibText(heap.HeapInuse))
	return nil
}
