package admission_test

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/controllertest"
	"github.com/steward-oam/steward/internal/controller/manager"
	"github.com/steward-oam/steward/internal/controller/manager/managertest"
)

// admissionOptions runs the webhook on a free loopback port, as steward
// dev does: Steward writes its own configuration (named after the test)
// and issues its own certificate for 127.0.0.1.
func admissionOptions(t testing.TB) manager.Options {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	opts := managertest.Options()
	opts.UseWebhook = true
	opts.WebhookHost = "127.0.0.1"
	opts.WebhookPort = port
	opts.WebhookURL = "https://127.0.0.1:" + strconv.Itoa(port)
	opts.WebhookCertDir = t.TempDir()
	opts.WebhookConfiguration = "steward-" + strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	opts.WebhookCertSecret = opts.WebhookConfiguration
	opts.LeaderElectionNS = "default"
	t.Cleanup(func() {
		vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		vwc.Name = opts.WebhookConfiguration
		_ = controllertest.Client(t).Delete(context.Background(), vwc)
		mwc := &admissionregistrationv1.MutatingWebhookConfiguration{}
		mwc.Name = opts.WebhookConfiguration
		_ = controllertest.Client(t).Delete(context.Background(), mwc)
	})
	return opts
}

func appFromYAML(t testing.TB, ns, doc string) *v1beta1.Application {
	t.Helper()
	app := &v1beta1.Application{}
	if err := yaml.Unmarshal([]byte(doc), app); err != nil {
		t.Fatal(err)
	}
	app.Namespace = ns
	return app
}

// dryRun creates obj with server-side dry run: the API server calls the
// webhooks, and nothing is stored.
func dryRun(t testing.TB, obj client.Object) error {
	t.Helper()
	return controllertest.Client(t).Create(context.Background(), obj.DeepCopyObject().(client.Object), client.DryRunAll)
}

// waitAdmission waits until the webhook answers (its certificate is in
// the configuration): until then the API server admits everything.
func waitAdmission(t *testing.T, ns string) {
	t.Helper()
	probe := appFromYAML(t, ns, `
metadata: {name: probe}
spec: {components: [{name: c, type: no-such-type}]}
`)
	controllertest.Eventually(t, 60*time.Second, "the webhook refusing an unknown type", func() error {
		if err := dryRun(t, probe); err == nil {
			return controllertest.ErrNotYet
		}
		return nil
	})
}

// refused asserts that creating obj is refused as invalid, with a
// message naming field and saying want.
func refused(t *testing.T, obj client.Object, field, want string) {
	t.Helper()
	err := dryRun(t, obj)
	if err == nil {
		t.Fatalf("%s admitted; want refused at %s", obj.GetName(), field)
	}
	t.Logf("refused: %v", err)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), field) || !strings.Contains(err.Error(), want) {
		t.Fatalf("%s refused with %v; want Invalid naming %s and %q", obj.GetName(), err, field, want)
	}
}

// A CI pipeline that `kubectl apply`s an Application that can never render
// is told so at once, with the field at fault; a valid one is admitted.
func TestAdmission_RefusesWhatCanNeverRender(t *testing.T) {
	ns := controllertest.NewNamespace(t)
	managertest.Start(t, nil, admissionOptions(t))
	waitAdmission(t, ns)

	refused(t, appFromYAML(t, ns, `
metadata: {name: unknown-type}
spec: {components: [{name: web, type: no-such-type}]}
`), "spec.components[0].type", `component type "no-such-type" has no ComponentDefinition`)
	refused(t, appFromYAML(t, ns, `
metadata: {name: unknown-trait}
spec: {components: [{name: web, type: test-config, properties: {name: x}, traits: [{type: no-such-trait}]}]}
`), "spec.components[0].traits[0].type", `trait type "no-such-trait"`)
	refused(t, appFromYAML(t, ns, `
metadata: {name: wrong-type}
spec: {components: [{name: web, type: test-config, properties: {name: 5}}]}
`), "spec.components[0].properties.name", "properties do not fit parameter")
	refused(t, appFromYAML(t, ns, `
metadata: {name: missing-required}
spec: {components: [{name: web, type: test-config, properties: {data: {k: v}}}]}
`), "spec.components[0].properties", "name")
	refused(t, appFromYAML(t, ns, `
metadata: {name: unknown-step}
spec:
  components: [{name: web, type: test-config, properties: {name: x}}]
  workflow: {steps: [{name: s1, type: no-such-step}]}
`), "spec.workflow.steps[0].type", "no-such-step")

	bad := controllertest.VersionedDefinition(ns, "broken", "one", "\n\tdata: {")
	refused(t, bad, "spec.schematic.cue.template", "broken")

	valid := appFromYAML(t, ns, `
metadata: {name: valid}
spec: {components: [{name: web, type: test-config, properties: {name: valid, data: {k: v}}}]}
`)
	if err := dryRun(t, valid); err != nil {
		t.Fatalf("a valid Application was refused: %v", err)
	}
	if err := dryRun(t, controllertest.VersionedDefinition(ns, "fine", "one", "")); err != nil {
		t.Fatalf("a valid definition was refused: %v", err)
	}
}

// With the webhook down, the cluster is not blocked: Applications are
// admitted (failurePolicy Ignore), and the controller reports what is
// wrong as a condition, as without admission.
func TestAdmission_WebhookDownAdmitsAndControllerReports(t *testing.T) {
	ns := controllertest.NewNamespace(t)
	opts := admissionOptions(t)
	stop := managertest.Start(t, nil, opts)
	waitAdmission(t, ns)
	stop()
	// The configuration stays, pointing at nothing that answers.
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := controllertest.Client(t).Get(context.Background(), client.ObjectKey{Name: opts.WebhookConfiguration}, vwc); err != nil {
		t.Fatalf("the configuration is gone: %v", err)
	}
	controllertest.CreateApp(t, ns, `
metadata: {name: bad}
spec: {components: [{name: web, type: no-such-type}]}
`)
	managertest.Start(t, nil, managertest.Options())
	controllertest.Eventually(t, 30*time.Second, "the condition", func() error {
		c, err := controllertest.Condition(t, ns, "bad", v1beta1.ConditionRendered)
		if err != nil {
			return err
		}
		if c.Reason != v1beta1.ReasonDefinitionNotFound {
			return fmt.Errorf("rendered %s: %s", c.Reason, c.Message)
		}
		return nil
	})
}

// BenchmarkAdmission_ValidApplication measures a create of a valid
// Application through the API server and the webhook (server-side dry
// run): what `kubectl apply` waits for, for an Application of 2 and of 200
// components (each rendered by the check).
func BenchmarkAdmission_ValidApplication(b *testing.B) {
	ns := controllertest.NewNamespace(b)
	opts := admissionOptions(b)
	mgr, err := manager.NewManager(controllertest.Config(b), opts)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = mgr.Start(ctx) }()
	probe := appFromYAML(b, ns, `
metadata: {name: probe}
spec: {components: [{name: c, type: no-such-type}]}
`)
	deadline := time.Now().Add(60 * time.Second)
	for dryRun(b, probe) == nil {
		if time.Now().After(deadline) {
			b.Fatal("the webhook never answered")
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, n := range []int{2, 200} {
		b.Run(fmt.Sprintf("components=%d", n), func(b *testing.B) {
			valid := &v1beta1.Application{}
			valid.Name, valid.Namespace = "valid", ns
			for i := range n {
				valid.Spec.Components = append(valid.Spec.Components, v1beta1.ApplicationComponent{Name: fmt.Sprintf("c%d", i), Type: "test-config",
					Properties: &runtime.RawExtension{Raw: []byte(fmt.Sprintf(`{"name":"valid-%d","data":{"k":"v"}}`, i))}})
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				app := valid.DeepCopy()
				app.Spec.Components[0].Properties.Raw = []byte(fmt.Sprintf(`{"name":"valid","data":{"n":"%d"}}`, i))
				if err := dryRun(b, app); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/admission")
		})
	}
}
