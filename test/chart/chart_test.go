package chart

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/steward-oam/steward/internal/admission"
	"github.com/steward-oam/steward/internal/controller/manager"
)

func TestChart_LintsStrictly(t *testing.T) {
	if out, err := runHelm(t, "lint", "--strict", "charts/steward", "--kube-version", kubeVersion); err != nil {
		t.Fatalf("helm lint: %v\n%s", err, out)
	}
}

// TestChart_CopiesMatchConfig fails when hack/sync-chart.sh was not run
// after config/ changed.
func TestChart_CopiesMatchConfig(t *testing.T) {
	pairs := []struct{ src, glob, dest string }{
		{"config/crd", "*.yaml", "charts/steward/crds"},
		{"config/rbac", "role.yaml", "charts/steward/files/rbac"},
		{"config/definitions", "*.yaml", "charts/steward/files/definitions"},
	}
	for _, p := range pairs {
		src, _ := filepath.Glob(filepath.Join(root, p.src, p.glob))
		dest, _ := filepath.Glob(filepath.Join(root, p.dest, p.glob))
		if len(src) == 0 {
			t.Fatalf("nothing in %s/%s", p.src, p.glob)
		}
		base := func(paths []string) []string {
			out := make([]string, len(paths))
			for i, path := range paths {
				out[i] = filepath.Base(path)
			}
			return out
		}
		if !slices.Equal(base(src), base(dest)) {
			t.Errorf("%s holds %v, %s holds %v: run hack/sync-chart.sh", p.dest, base(dest), p.src, base(src))
			continue
		}
		for i := range src {
			a, _ := os.ReadFile(src[i])
			b, _ := os.ReadFile(dest[i])
			if !bytes.Equal(a, b) {
				t.Errorf("%s differs from %s: run hack/sync-chart.sh", dest[i], src[i])
			}
		}
	}
}

// TestChart_DeploymentFlagsAreControllerFlags parses the Deployment's
// arguments with the controller's own flag set, so that a renamed flag
// breaks this test rather than the installed controller.
func TestChart_DeploymentFlagsAreControllerFlags(t *testing.T) {
	objs := render(t)
	args := containerArgs(t, one(t, objs, "Deployment"))
	if len(args) == 0 || args[0] != "controller" {
		t.Fatalf("args %v: want the controller subcommand first", args)
	}
	opts := parseControllerFlags(t, args[1:])
	want := manager.NewOptions()
	want.ReSyncPeriod = 5 * time.Minute
	want.ConcurrentReconciles = 4
	want.KubeAPIQPS = 400
	want.KubeAPIBurst = 600
	want.EnableLeaderElection = true
	want.LeaderElectionNS = releaseNamespace
	want.SystemDefinitionNS = "vela-system"
	want.MetricsAddr = ":8080"
	want.HealthAddr = ":9440"
	want.UseWebhook = true
	want.WebhookService = "steward-webhook"
	want.WebhookCertSecret = "steward-webhook-certs"
	if !reflect.DeepEqual(opts, want) {
		t.Fatalf("options from the chart:\n%+v\nwant\n%+v", opts, want)
	}

	objs = render(t, "--set", "metrics.enabled=false,leaderElection.enabled=false,controllerArgs.trackerCompression=zstd,admission.enabled=false,dashboard.enabled=true",
		"--set", "controllerArgs.cachedGVKs={Deployment.v1.apps,ConfigMap.v1},controllerArgs.driftDetection=timer",
		"--set", "extraArgs={--zap-log-level=4,--application-re-sync-jitter=0.2}")
	opts = parseControllerFlags(t, containerArgs(t, one(t, objs, "Deployment"))[1:])
	if opts.MetricsAddr != "0" || opts.EnableLeaderElection || opts.TrackerCompression != "zstd" ||
		!slices.Equal(opts.CachedGVKs, []string{"Deployment.v1.apps", "ConfigMap.v1"}) || opts.ReSyncJitter != 0.2 ||
		opts.DriftDetection != "timer" || opts.UseWebhook || opts.DashboardAddr != "127.0.0.1:8090" {
		t.Fatalf("options from custom values: %+v", opts)
	}
	if len(find(objs, "Service")) != 0 || len(find(objs, "Role")) != 0 {
		t.Fatal("metrics Service or leader-election Role rendered although disabled")
	}
}

// TestChart_TenancyValuesLockDown: the tenancy values reach the controller
// as the lock-down flags, and the ClusterRole lets it impersonate the
// ServiceAccounts it acts as.
func TestChart_TenancyValuesLockDown(t *testing.T) {
	objs := render(t, "--set", "tenancy.defaultServiceAccount=deployer,tenancy.noCrossNamespaceObjects=true")
	opts := parseControllerFlags(t, containerArgs(t, one(t, objs, "Deployment"))[1:])
	if opts.DefaultServiceAccount != "deployer" || !opts.NoCrossNamespaceObjects {
		t.Fatalf("options from the tenancy values: default service account %q, no cross-namespace objects %v",
			opts.DefaultServiceAccount, opts.NoCrossNamespaceObjects)
	}
	rules, _, _ := unstructured.NestedSlice(one(t, objs, "ClusterRole").Object, "rules")
	for _, r := range rules {
		rule := r.(map[string]any)
		if slices.Contains(toStrings(rule["resources"]), "serviceaccounts") && slices.Contains(toStrings(rule["verbs"]), "impersonate") {
			return
		}
	}
	t.Fatalf("the ClusterRole does not allow impersonating serviceaccounts: %v", rules)
}

func toStrings(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// parseControllerFlags parses args as `steward controller` does: the
// controller's options plus the zap logging flags.
func parseControllerFlags(t *testing.T, args []string) manager.Options {
	t.Helper()
	opts := manager.NewOptions()
	fs := pflag.NewFlagSet("controller", pflag.ContinueOnError)
	opts.BindFlags(fs)
	gofs := flag.NewFlagSet("zap", flag.ContinueOnError)
	(&zap.Options{}).BindFlags(gofs)
	fs.AddGoFlagSet(gofs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("the controller rejects the chart's flags %v: %v", args, err)
	}
	if fs.NArg() != 0 {
		t.Fatalf("stray arguments %v", fs.Args())
	}
	if err := opts.Validate(); err != nil {
		t.Fatalf("the chart's flags are invalid: %v", err)
	}
	return opts
}

func containerArgs(t *testing.T, deploy *unstructured.Unstructured) []string {
	t.Helper()
	containers, _, _ := unstructured.NestedSlice(deploy.Object, "spec", "template", "spec", "containers")
	if len(containers) != 1 {
		t.Fatalf("%d containers, want 1", len(containers))
	}
	args, _, err := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
	if err != nil {
		t.Fatal(err)
	}
	return args
}

func TestChart_ClusterRoleHasTheGeneratedRules(t *testing.T) {
	objs := render(t)
	role := readObject(t, filepath.Join(root, "config", "rbac", "role.yaml"))
	got := one(t, objs, "ClusterRole")
	if !reflect.DeepEqual(got.Object["rules"], role.Object["rules"]) {
		t.Fatalf("ClusterRole rules differ from config/rbac/role.yaml:\n%v\n%v", got.Object["rules"], role.Object["rules"])
	}
	binding := one(t, objs, "ClusterRoleBinding")
	if name, _, _ := unstructured.NestedString(binding.Object, "roleRef", "name"); name != got.GetName() {
		t.Fatalf("ClusterRoleBinding refers to %q, ClusterRole is %q", name, got.GetName())
	}
}

func TestChart_InstallsBuiltinDefinitionsIntoTheSystemNamespace(t *testing.T) {
	for _, ns := range []string{"vela-system", "platform-defs"} {
		objs := render(t, "--set", "systemDefinitionNamespace="+ns)
		files, _ := filepath.Glob(filepath.Join(root, "config", "definitions", "*.yaml"))
		defs := append(find(objs, "ComponentDefinition"), find(objs, "TraitDefinition")...)
		if len(defs) != len(files) {
			t.Fatalf("%d definitions rendered, config/definitions has %d", len(defs), len(files))
		}
		for _, f := range files {
			want := readObject(t, f)
			got := findNamed(defs, want.GetKind(), want.GetName())
			if got == nil {
				t.Errorf("%s: %s %s not rendered", f, want.GetKind(), want.GetName())
				continue
			}
			if got.GetNamespace() != ns {
				t.Errorf("%s %s in namespace %q, want %q", got.GetKind(), got.GetName(), got.GetNamespace(), ns)
			}
			if !reflect.DeepEqual(got.Object["spec"], want.Object["spec"]) {
				t.Errorf("%s %s: rendered spec differs from %s", got.GetKind(), got.GetName(), f)
			}
		}
		namespaces := find(objs, "Namespace")
		if len(namespaces) != 1 || namespaces[0].GetName() != ns {
			t.Errorf("want the chart to create namespace %s, got %v", ns, namespaces)
		}
	}
	objs := render(t, "--set", "installDefinitions=false,systemDefinitionNamespace="+releaseNamespace)
	if n := len(find(objs, "ComponentDefinition")) + len(find(objs, "Namespace")); n != 0 {
		t.Fatalf("%d definitions or namespaces rendered with installDefinitions=false", n)
	}
}

func findNamed(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

func TestChart_RefusesReplicasWithoutLeaderElection(t *testing.T) {
	_, err := runHelm(t, "template", "steward", "charts/steward", "--kube-version", kubeVersion,
		"--set", "replicaCount=2,leaderElection.enabled=false")
	if err == nil || !strings.Contains(err.Error(), "needs leaderElection.enabled") {
		t.Fatalf("got %v, want a refusal", err)
	}
}

// TestChart_ShardingRendersOneDeploymentPerShard: sharding.shards=3 gives
// the master and two shards, each a Deployment of its own (selectors that
// do not overlap) running the controller with its shard's flags, and the
// Role for the shards' Leases even without leader election.
func TestChart_ShardingRendersOneDeploymentPerShard(t *testing.T) {
	objs := render(t, "--set", "sharding.enabled=true,sharding.shards=3,sharding.reassignGrace=90s,leaderElection.enabled=false")
	deps := find(objs, "Deployment")
	if len(deps) != 3 {
		t.Fatalf("%d Deployments, want one per shard (3)", len(deps))
	}
	selectors := map[string]bool{}
	for i, dep := range deps {
		id := "master"
		if i > 0 {
			id = fmt.Sprintf("shard-%d", i)
		}
		if want := "steward-" + id; dep.GetName() != want {
			t.Errorf("Deployment %d is %s, want %s", i, dep.GetName(), want)
		}
		opts := parseControllerFlags(t, containerArgs(t, dep)[1:])
		s := opts.Sharding
		if !s.Enabled || s.ShardID != id || s.LeaseNamespace != releaseNamespace || s.ReassignGrace != 90*time.Second {
			t.Errorf("%s: sharding options %+v", dep.GetName(), s)
		}
		sel, _, _ := unstructured.NestedStringMap(dep.Object, "spec", "selector", "matchLabels")
		pod, _, _ := unstructured.NestedStringMap(dep.Object, "spec", "template", "metadata", "labels")
		if sel["controller.core.oam.dev/shard-id"] != id || pod["controller.core.oam.dev/shard-id"] != id {
			t.Errorf("%s: selector %v, pod labels %v: want the shard id in both", dep.GetName(), sel, pod)
		}
		selectors[fmt.Sprint(sel)] = true
	}
	if len(selectors) != 3 {
		t.Errorf("the shards' Deployments share selectors: %v", selectors)
	}
	role := one(t, objs, "Role")
	rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
	if !strings.Contains(fmt.Sprint(rules), "leases") {
		t.Errorf("no Role rule for the shards' Leases: %v", rules)
	}
	if _, err := runHelm(t, "template", "steward", "charts/steward", "--kube-version", kubeVersion, "--set", "sharding.enabled=true,sharding.shards=0"); err == nil {
		t.Error("sharding.shards=0 rendered; want a refusal")
	}
}

// TestChart_WebhookConfigurationIsAdmissions: the chart's
// ValidatingWebhookConfiguration is the one internal/admission builds (the
// controller writes that one itself outside a cluster), calling the
// webhook Service the controller issues its certificate for; with
// cert-manager, its Certificate names the same Service and Secret.
func TestChart_WebhookConfigurationIsAdmissions(t *testing.T) {
	objs := render(t)
	live := one(t, objs, "ValidatingWebhookConfiguration")
	var got admissionregistrationv1.ValidatingWebhookConfiguration
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(live.Object, &got); err != nil {
		t.Fatal(err)
	}
	svc := &admissionregistrationv1.ServiceReference{Name: "steward-webhook", Namespace: releaseNamespace, Port: ptr.To[int32](443)}
	want := admission.Configuration("steward", admission.ClientConfig{Service: svc}, nil)
	if !equality.Semantic.DeepEqual(got.Webhooks, want.Webhooks) {
		t.Fatalf("chart webhooks:\n%+v\nwant (internal/admission):\n%+v", got.Webhooks, want.Webhooks)
	}
	if got.Name != "steward" {
		t.Fatalf("configuration %q; the controller keeps the caBundle of --webhook-configuration=steward", got.Name)
	}
	services := find(objs, "Service")
	found := false
	for _, s := range services {
		found = found || s.GetName() == svc.Name
	}
	if !found {
		t.Fatal("no webhook Service")
	}

	objs = render(t, "--set", "admission.certManager.enabled=true")
	opts := parseControllerFlags(t, containerArgs(t, one(t, objs, "Deployment"))[1:])
	if opts.WebhookCerts != manager.WebhookCertsExternal {
		t.Fatalf("cert-manager mode passes --webhook-certs=%s", opts.WebhookCerts)
	}
	cert := one(t, objs, "Certificate")
	if sn, _, _ := unstructured.NestedString(cert.Object, "spec", "secretName"); sn != "steward-webhook-certs" {
		t.Fatalf("certificate secret %q", sn)
	}
	if one(t, objs, "ValidatingWebhookConfiguration").GetAnnotations()["cert-manager.io/inject-ca-from"] != releaseNamespace+"/steward-webhook" {
		t.Fatal("cert-manager does not inject the caBundle")
	}
}

// TestChart_EgressAndStepBounds: the egress values reach the controller as
// --egress-allow and --egress-deny, and the step bounds as their flags.
func TestChart_EgressAndStepBounds(t *testing.T) {
	objs := render(t, "--set", "egress.allow={127.0.0.1/32,hooks.example.com},egress.deny={10.0.0.0/8},controllerArgs.maxStepActionResultSize=1Mi,controllerArgs.stepActionWorkersPerNamespace=2")
	opts := parseControllerFlags(t, containerArgs(t, one(t, objs, "Deployment"))[1:])
	if !slices.Equal(opts.EgressAllow, []string{"127.0.0.1/32", "hooks.example.com"}) || !slices.Equal(opts.EgressDeny, []string{"10.0.0.0/8"}) ||
		opts.MaxStepActionResult.Value() != 1<<20 || opts.StepActionWorkersPerNamespace != 2 {
		t.Fatalf("options from the egress and step values: allow %v, deny %v, action result %s, per namespace %d",
			opts.EgressAllow, opts.EgressDeny, opts.MaxStepActionResult.String(), opts.StepActionWorkersPerNamespace)
	}
	if err := opts.Validate(); err != nil {
		t.Fatalf("the chart's defaults with these values do not validate: %v", err)
	}
}
