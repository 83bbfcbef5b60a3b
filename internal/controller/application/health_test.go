package application

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/steward-oam/steward/api/v1beta1"
)

func TestHealth_PolicyFollowsTheLiveObject(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	createApp(t, ns, "metadata: {name: api}\nspec: {components: [{name: api, type: test-healthy, properties: {image: nginx}}]}\n")

	msg := waitNotReady(t, ns, "api", v1beta1.ReasonUnhealthy)
	if !strings.Contains(msg, "ready 0/2") {
		t.Errorf("message %q does not carry the customStatus", msg)
	}
	app := getApp(t, ns, "api")
	if app.Status.Phase != v1beta1.ApplicationUnhealthy || len(app.Status.Services) != 1 || app.Status.Services[0].Healthy {
		t.Errorf("phase %q services %+v", app.Status.Phase, app.Status.Services)
	}

	// The workload becomes ready: envtest runs no controllers, so the
	// test plays the Deployment controller.
	dep, _ := getDeployment(t, ns, "api")
	dep.Status.Replicas, dep.Status.ReadyReplicas, dep.Status.AvailableReplicas = 2, 2, 2
	if err := testClient.Status().Update(context.Background(), dep); err != nil {
		t.Fatal(err)
	}
	app = waitReady(t, ns, "api")
	if app.Status.Phase != v1beta1.ApplicationRunning || !app.Status.Services[0].Healthy || app.Status.Services[0].Message != "ready 2/2" {
		t.Errorf("phase %q services %+v", app.Status.Phase, app.Status.Services)
	}
	c := v1beta1.FindCondition(app.Status.Conditions, v1beta1.ConditionHealthy)
	if c == nil || c.Status != "True" {
		t.Errorf("healthy = %+v", c)
	}
}

// writes counts the requests of the log that change something.
func (l *requestLog) writes() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, r := range l.reqs {
		if !strings.HasPrefix(r, "GET ") {
			out = append(out, r)
		}
	}
	return out
}

// all returns every request of the log.
func (l *requestLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.reqs)
}

func (l *requestLog) reset() {
	l.mu.Lock()
	l.reqs, l.metadata = nil, nil
	l.mu.Unlock()
}

// Timer mode's re-sync passes over an unchanged app: one metadata-only
// read per object and pass, nothing read whole, nothing written, nothing
// of Steward's own kinds read from the API server.
func TestSteadyState_OneMetadataReadPerObjectAndNoWrites(t *testing.T) {
	ns := newNamespace(t)
	log := &requestLog{}
	opts := testOptions()
	opts.ReSyncPeriod = time.Hour // the app's own interval drives the passes
	startManager(t, log.wrap(testCfg), opts)
	app := strings.Replace(webApp, "  name: web\n", "  name: web\n  annotations: {"+v1beta1.AnnotationReconcileInterval+": 1s}\n", 1)
	createApp(t, ns, app)
	waitReady(t, ns, "web")
	time.Sleep(3 * time.Second) // the dispatch's aftermath and the process's first full read

	log.reset()
	before := reconcileCount(t)
	time.Sleep(5 * time.Second)
	passes := int(reconcileCount(t) - before)
	if passes < 3 {
		t.Fatalf("%d passes in 5 s at a 1 s interval; the test measures nothing", passes)
	}
	if w := log.writes(); len(w) > 0 {
		t.Errorf("steady-state passes wrote: %v", w)
	}
	objects := map[string]string{
		"deployment": "GET /apis/apps/v1/namespaces/" + ns + "/deployments/web?",
		"service":    "GET /api/v1/namespaces/" + ns + "/services/web?",
		"configmap":  "GET /api/v1/namespaces/" + ns + "/configmaps/web-config?",
	}
	for name, prefix := range objects {
		// A pass may have been under way when the window opened or closed.
		all, metadata := log.count(prefix), log.countMetadata(prefix)
		if metadata < passes-1 || metadata > passes+1 {
			t.Errorf("%s read by its metadata %d times in %d passes; want one read per pass", name, metadata, passes)
		}
		// An object still at the resourceVersion Steward recorded is
		// neither read whole nor compared.
		if whole := all - metadata; whole != 0 {
			t.Errorf("%s read whole %d times in %d steady passes; want none", name, whole, passes)
		}
	}
	if n := log.count("GET /apis/core.oam.dev"); n != 0 {
		t.Errorf("%d reads of Steward's own kinds went to the API server instead of the cache", n)
	}
	if n := log.count("GET /api/v1/namespaces/" + ns + "/events"); n != 0 {
		t.Errorf("%d event reads", n)
	}
}

func TestDrift_RepairProducesOneEventAndACounterIncrement(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	createApp(t, ns, webApp)
	waitReady(t, ns, "web")
	before := counterValue(t, "steward_drift_repaired_total", map[string]string{"kind": "Deployment"})

	dep, _ := getDeployment(t, ns, "web")
	patch := client.MergeFrom(dep.DeepCopy())
	one := int32(1)
	dep.Spec.Replicas = &one
	if err := testClient.Patch(context.Background(), dep, patch); err != nil {
		t.Fatal(err)
	}
	note := waitEvent(t, ns, "web", v1beta1.EventDriftRepaired)
	if !strings.Contains(note, "Deployment.apps "+ns+"/web") || !strings.Contains(note, "spec.replicas") {
		t.Errorf("event %q does not say which object and field drifted", note)
	}
	time.Sleep(5 * time.Second)
	n := 0
	for _, e := range appEvents(t, ns, "web") {
		if e.Reason == v1beta1.EventDriftRepaired {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d DriftRepaired events for one drift", n)
	}
	if got := counterValue(t, "steward_drift_repaired_total", map[string]string{"kind": "Deployment"}) - before; got != 1 {
		t.Errorf("steward_drift_repaired_total{kind=Deployment} grew by %v, want 1", got)
	}
}

func TestDrift_ReportModeDoesNotRepair(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	createApp(t, ns, strings.Replace(webApp, "  name: web\n", "  name: web\n  annotations: {app.oam.dev/drift-mode: report}\n", 1))
	waitReady(t, ns, "web")
	dep, _ := getDeployment(t, ns, "web")
	patch := client.MergeFrom(dep.DeepCopy())
	one := int32(1)
	dep.Spec.Replicas = &one
	if err := testClient.Patch(context.Background(), dep, patch); err != nil {
		t.Fatal(err)
	}
	msg := waitNotReady(t, ns, "web", v1beta1.ReasonDriftDetected)
	if !strings.Contains(msg, "spec.replicas") {
		t.Errorf("message %q does not name the drifted field", msg)
	}
	dep, _ = getDeployment(t, ns, "web")
	if *dep.Spec.Replicas != 1 {
		t.Errorf("report mode repaired the drift: replicas = %d", *dep.Spec.Replicas)
	}
}

func TestMetrics_PerAppSeriesExposedAndDeletedWithTheApp(t *testing.T) {
	ns := newNamespace(t)
	startManager(t, testCfg, testOptions())
	createApp(t, ns, webApp)
	waitReady(t, ns, "web")
	labels := map[string]string{"namespace": ns, "app": "web"}
	if got := gaugeValue(t, "steward_tracked_resources", labels); got != 3 {
		t.Errorf("steward_tracked_resources = %v, want 3", got)
	}
	if got := gaugeValue(t, "steward_tracker_size_bytes", map[string]string{"namespace": ns, "app": "web", "encoding": "raw"}); got <= 0 {
		t.Errorf("steward_tracker_size_bytes{raw} = %v", got)
	}
	if counterValue(t, "steward_api_requests_total", map[string]string{"verb": "get"}) <= 0 {
		t.Error("steward_api_requests_total{verb=get} not counted")
	}
	deleteApp(t, ns, "web")
	if _, ok := findSample(t, "steward_tracked_resources", labels); ok {
		t.Error("the app's series outlived it")
	}
}

// findSample returns the value of the sample of name with the given labels.
func findSample(t *testing.T, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total, found := 0.0, false
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			for k, v := range labels {
				if labelValue(m, k) != v {
					continue next
				}
			}
			found = true
			if m.GetCounter() != nil {
				total += m.GetCounter().GetValue()
			} else {
				total += m.GetGauge().GetValue()
			}
		}
	}
	return total, found
}

func counterValue(t *testing.T, name string, labels map[string]string) float64 {
	v, _ := findSample(t, name, labels)
	return v
}

func gaugeValue(t *testing.T, name string, labels map[string]string) float64 {
	v, ok := findSample(t, name, labels)
	if !ok {
		t.Errorf("no %s%v series", name, labels)
	}
	return v
}
