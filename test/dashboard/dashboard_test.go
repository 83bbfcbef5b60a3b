package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/yaml"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/manager"
	"github.com/steward-oam/steward/internal/dashboard"
	"github.com/steward-oam/steward/internal/testcp"
	"github.com/steward-oam/steward/internal/watch"
)

// browser finds Chromium. Without one the test skips, unless
// STEWARD_REQUIRE_BROWSER is set (CI sets it, having installed it).
func browser(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("STEWARD_REQUIRE_BROWSER") != "" {
		t.Fatal("no Chromium found, and STEWARD_REQUIRE_BROWSER is set: install Debian's chromium package")
	}
	t.Skip("no Chromium found (install Debian's chromium package): the browser test is skipped")
	return ""
}

const definition = `
apiVersion: core.oam.dev/v1beta1
kind: ComponentDefinition
metadata: {name: config}
spec:
  schematic:
    cue:
      template: |
        output: {
          apiVersion: "v1"
          kind:       "ConfigMap"
          metadata: name: context.name
          data: parameter.data
        }
        parameter: data: [string]: string
`

func mustCreate(t *testing.T, c client.Client, doc, namespace string) client.Object {
	t.Helper()
	var obj client.Object
	switch {
	case strings.Contains(doc, "kind: ComponentDefinition"):
		obj = &v1beta1.ComponentDefinition{}
	default:
		obj = &v1beta1.Application{}
	}
	if err := yaml.Unmarshal([]byte(doc), obj); err != nil {
		t.Fatal(err)
	}
	obj.SetNamespace(namespace)
	if err := c.Create(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

func eventually(t *testing.T, d time.Duration, what string, f func() error) {
	t.Helper()
	var err error
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if err = f(); err == nil {
			return
		}
	}
	t.Fatalf("%s: not within %s: %v", what, d, err)
}

// outputDir is where screenshots go: $STEWARD_TEST_OUTPUT/dashboard, else
// _output/dashboard at the repository's root.
func outputDir(t *testing.T) string {
	dir := filepath.Join("..", "..", "_output", "dashboard")
	if o := os.Getenv("STEWARD_TEST_OUTPUT"); o != "" {
		dir = filepath.Join(o, "dashboard")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A user opens the dashboard while Steward runs: the list shows the
// Applications with their health; an Application's page shows its
// objects, and a hand edit shows as drift within seconds without a
// reload; a workflow held at a suspend step says so; markup in an event
// is shown as text.
func TestDashboard_InABrowser(t *testing.T) {
	chromium := browser(t)
	ctrllog.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	plane := testcp.StartT(t, testcp.Options{CRDDirectoryPaths: []string{filepath.Join("..", "..", "config", "crd")}}, "hub")[0]
	c, err := plane.Client(client.Options{Scheme: manager.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)

	// The controller repairs drift on its re-sync pass only (timer mode,
	// one hour), so a hand edit stays for the dashboard to show.
	opts := manager.NewOptions()
	opts.MetricsAddr, opts.HealthAddr, opts.SkipNameValidation = "0", "0", true
	opts.DriftDetection, opts.ReSyncPeriod = watch.ModeTimer, time.Hour
	mgr, err := manager.NewManager(plane.Config, opts)
	if err != nil {
		t.Fatal(err)
	}
	// The controller serves the dashboard too, with its own identity.
	controllerAddr := freeLoopbackAddr(t)
	if err := dashboard.AddToManager(mgr, plane.Config, controllerAddr, false, ""); err != nil {
		t.Fatal(err)
	}
	go func() { _ = mgr.Start(ctx) }()

	ns := "shop"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, c, definition, ns)
	mustCreate(t, c, `
metadata: {name: storefront}
spec:
  components:
    - {name: web, type: config, properties: {data: {greeting: hello}}}
    - {name: api, type: config, properties: {data: {port: "8080"}}}
`, ns)
	mustCreate(t, c, `
metadata: {name: release}
spec:
  components:
    - {name: canary, type: config, properties: {data: {stage: one}}}
  workflow:
    steps:
      - {name: deploy-canary, type: apply-component, properties: {component: canary}}
      - {name: approve, type: suspend}
`, ns)
	eventually(t, time.Minute, "storefront delivered and healthy", func() error {
		var app v1beta1.Application
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "storefront"}, &app); err != nil {
			return err
		}
		if app.Status.Phase != v1beta1.ApplicationRunning {
			return fmt.Errorf("phase %q", app.Status.Phase)
		}
		return nil
	})
	eventually(t, time.Minute, "release held at its suspend step", func() error {
		var app v1beta1.Application
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "release"}, &app); err != nil {
			return err
		}
		if app.Status.Workflow == nil || !app.Status.Workflow.Suspend {
			return fmt.Errorf("workflow %+v", app.Status.Workflow)
		}
		return nil
	})
	// An event whose note holds markup: the page must show it as text.
	var storefront v1beta1.Application
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "storefront"}, &storefront); err != nil {
		t.Fatal(err)
	}
	hostile := `<img id="injected" src="x"> <script>window.injected=1</script>`
	if err := c.Create(ctx, &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "storefront.hostile"},
		EventTime:  metav1.NewMicroTime(time.Now()), Type: corev1.EventTypeWarning, Reason: "Probe", Note: hostile,
		Action: "Probe", ReportingController: "test", ReportingInstance: "test",
		Regarding: corev1.ObjectReference{APIVersion: v1beta1.GroupVersion.String(), Kind: "Application", Namespace: ns,
			Name: storefront.Name, UID: storefront.UID},
	}); err != nil {
		t.Fatal(err)
	}

	// The dashboard, as `steward dashboard` runs it, with the plane's
	// admin identity.
	hub := c
	urls := make(chan string, 1)
	go func() {
		err := dashboard.Run(ctx, plane.Config, hub, dashboard.RunOptions{Address: "127.0.0.1:0", AllNamespaces: true, Namespace: "default",
			Identity: "test-admin", Ready: func(u string) { urls <- u }, Log: ctrllog.Log.WithName("dashboard")})
		if err != nil && ctx.Err() == nil {
			t.Errorf("dashboard: %v", err)
		}
	}()
	var base string
	select {
	case base = <-urls:
	case <-time.After(time.Minute):
		t.Fatal("the dashboard did not start within a minute")
	}
	checkReadOnly(t, base)
	checkReadOnly(t, "http://"+controllerAddr+"/")
	if page := get(t, "http://"+controllerAddr+"/"); !strings.Contains(page, `data-app="shop/storefront"`) || !strings.Contains(page, "reading as the Steward controller") {
		t.Errorf("the controller's dashboard does not list storefront as the controller:\n%s", page)
	}

	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1280, 900))...)
	defer cancelAlloc()
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()
	out := outputDir(t)
	// The first run starts the browser, for the life of browserCtx.
	if err := chromedp.Do(browserCtx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting %s: %v", chromium, err)
	}
	b := &tab{t: t, ctx: browserCtx, out: out}

	// The list: both Applications, storefront healthy.
	b.do("the list page", time.Minute,
		chromedp.Navigate(base),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-app="shop/storefront"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#live-status[data-state="open"]`)))
	if health := b.text(`tr[data-app="shop/storefront"] .health`); health != "healthy" {
		t.Errorf("storefront's health on the list: %q, want healthy", health)
	}
	if phase := b.text(`tr[data-app="shop/release"] .phase`); phase != string(v1beta1.ApplicationWorkflowSuspending) {
		t.Errorf("release's phase on the list: %q, want %s", phase, v1beta1.ApplicationWorkflowSuspending)
	}
	b.shot("list.png")

	// An Application's page: its objects present, the event's markup as
	// text.
	b.do("storefront's page", time.Minute,
		chromedp.Navigate(base+"apps/shop/storefront"),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-object="ConfigMap/shop/web"][data-state="present"]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-object="ConfigMap/shop/api"][data-state="present"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#live-status[data-state="open"]`)))
	eventText := b.text(`tr.event-Warning .message`)
	if injected := b.eval(`document.getElementById("injected") !== null || window.injected === 1`); !strings.Contains(eventText, `<img id="injected"`) || injected {
		t.Errorf("the event's markup: shown as %q, injected %v; want it as text and nothing injected", eventText, injected)
	}
	b.eval(`window.notReloaded = true`)
	b.shot("application.png")

	// A hand edit: drifted, with the field, without a reload.
	var cm corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["greeting"] = "edited by hand"
	if err := c.Update(ctx, &cm); err != nil {
		t.Fatal(err)
	}
	edited := time.Now()
	b.do("the hand edit shown as drift", 10*time.Second,
		chromedp.WaitVisible(chromedp.CSS(`tr[data-object="ConfigMap/shop/web"][data-state="drifted"]`)))
	t.Logf("drift shown %s after the edit", time.Since(edited).Round(10*time.Millisecond))
	if fields := b.text(`tr[data-object="ConfigMap/shop/web"] .fields`); !strings.Contains(fields, "greeting") {
		t.Errorf("drifted fields shown: %q, want data.greeting", fields)
	}
	if !b.eval(`window.notReloaded === true`) {
		t.Error("the page reloaded to show the drift; want it updated in place")
	}
	b.shot("drift.png")

	// The workflow held at its suspend step.
	b.do("release's page", time.Minute,
		chromedp.Navigate(base+"apps/shop/release"),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-step="approve"]`)))
	approve, workflow := b.text(`tr[data-step="approve"] .phase`), b.text(`#workflow-phase`)
	if approve != "suspending" || !strings.Contains(workflow, "suspended") {
		t.Errorf("the suspend step: phase %q, workflow %q; want suspending and suspended", approve, workflow)
	}
	b.shot("workflow.png")

	b.do("the clusters page", time.Minute,
		chromedp.Navigate(base+"clusters"),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-cluster="local"]`)))
	b.shot("clusters.png")
	t.Logf("screenshots in %s", out)
}

// tab drives one browser tab for a test.
type tab struct {
	t   *testing.T
	ctx context.Context
	out string
}

func (b *tab) do(what string, timeout time.Duration, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// text reads an element's text in one evaluation in the page, so a live
// update replacing the element between finding it and reading it (the
// page re-renders fragments as the Application changes) cannot fail the
// read; it waits up to 10 s for the element to exist.
func (b *tab) text(selector string) string {
	b.t.Helper()
	sel, err := json.Marshal(selector)
	if err != nil {
		b.t.Fatal(err)
	}
	js := fmt.Sprintf(`(() => { const e = document.querySelector(%s); return e === null ? null : e.textContent; })()`, sel)
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
		v, err := chromedp.Run(ctx, chromedp.Evaluate[*string](js))
		cancel()
		if err != nil {
			b.t.Fatalf("reading %s: %v", selector, err)
		}
		if v != nil {
			return strings.TrimSpace(*v)
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("reading %s: no such element after 10s", selector)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (b *tab) eval(js string) bool {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
	if err != nil {
		b.t.Fatalf("evaluating %s: %v", js, err)
	}
	return v
}

// shot writes a screenshot of the whole page.
func (b *tab) shot(name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(b.out, name), buf, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// checkReadOnly: only GET and HEAD, unknown paths 404, safe headers.
func checkReadOnly(t *testing.T, base string) {
	t.Helper()
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{http.MethodGet, "", http.StatusOK},
		{http.MethodHead, "apps/shop/storefront", http.StatusOK},
		{http.MethodPost, "", http.StatusMethodNotAllowed},
		{http.MethodDelete, "apps/shop/storefront", http.StatusMethodNotAllowed},
		{http.MethodPut, "clusters", http.StatusMethodNotAllowed},
		{http.MethodGet, "admin", http.StatusNotFound},
		{http.MethodGet, "apps/shop/nothing-here", http.StatusNotFound},
	} {
		req, _ := http.NewRequest(tc.method, base+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s /%s: %d, want %d", tc.method, tc.path, resp.StatusCode, tc.want)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
			t.Errorf("%s /%s: Content-Security-Policy %q", tc.method, tc.path, csp)
		}
	}
}

func freeLoopbackAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}
