package chart

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// apiServer starts kube-apiserver and etcd from KUBEBUILDER_ASSETS with
// Steward's CRDs installed, for the test only.
func apiServer(t *testing.T) client.Client {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		require(t, "KUBEBUILDER_ASSETS", "build bin/k8s with hack/install-tools.sh and set KUBEBUILDER_ASSETS=$PWD/bin/k8s (make test does)")
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting envtest: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestChart_APIServerAcceptsEveryObject creates every rendered object with
// a server-side dry run and strict field validation, for the default
// values and for values that turn on every optional part (the
// ServiceMonitor aside, whose CRD envtest does not have). Namespaces are
// created for real first, since objects in them cannot be dry-run without
// them.
func TestChart_APIServerAcceptsEveryObject(t *testing.T) {
	helm(t)
	c := apiServer(t)
	ctx := context.Background()
	valueSets := map[string][]string{
		"defaults": {"--set", "kubevelaTools.enabled=true"}, // render turns it off
		"everything": {"--set", "replicaCount=2,controllerArgs.trackerCompression=gzip,systemDefinitionNamespace=oam-defs," +
			"serviceAccount.annotations.team=platform,metrics.service.annotations.scrape=true,podAnnotations.a=b," +
			"podLabels.tier=control,priorityClassName=system-cluster-critical,nodeSelector.role=infra," +
			"imagePullSecrets[0].name=regcred,podDisruptionBudget.enabled=true,metrics.serviceMonitor.enabled=true,dashboard.enabled=true",
			"--set", "controllerArgs.cachedGVKs={Deployment.v1.apps}",
			"--set", "extraArgs={--zap-log-level=4}",
			"--set-json", `tolerations=[{"key":"infra","operator":"Exists","effect":"NoSchedule"}]`},
		"custom": {"-f", filepath.Join("test", "chart", "testdata", "values-custom.yaml")},
		"minimal": {"--set", "metrics.enabled=false,leaderElection.enabled=false,rbac.create=false,serviceAccount.create=false," +
			"installDefinitions=false,createSystemDefinitionNamespace=false"},
	}
	for name, args := range valueSets {
		t.Run(name, func(t *testing.T) {
			objs := render(t, args...)
			createNamespace(t, c, releaseNamespace)
			for _, ns := range find(objs, "Namespace") {
				if err := c.Create(ctx, ns.DeepCopy()); err != nil && !apierrors.IsAlreadyExists(err) {
					t.Fatalf("Namespace %s: %v", ns.GetName(), err)
				}
			}
			for _, obj := range objs {
				// envtest serves no prometheus-operator CRDs;
				// TestChart_ServiceMonitorScrapesTheMetricsService checks
				// the ServiceMonitor against the Service it scrapes.
				if obj.GetKind() == "Namespace" || obj.GetKind() == "ServiceMonitor" {
					continue
				}
				if err := c.Create(ctx, obj.DeepCopy(), client.DryRunAll, client.FieldValidation("Strict")); err != nil {
					t.Errorf("%s %s/%s: %v", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
				}
			}
		})
	}
}

func createNamespace(t *testing.T, c client.Client, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.Create(context.Background(), ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("namespace %s: %v", name, err)
	}
}
