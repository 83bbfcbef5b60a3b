/*
Copyright 2026 The Steward Authors.

Licensed under the Apache License, Version 2.0.
*/

package localcp

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/manager"
)

// shared is one plane, with the bundled CRDs and definitions, for the tests
// that only use it; TestMain stops it.
var shared struct {
	once sync.Once
	cp   *ControlPlane
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.cp != nil {
		_ = shared.cp.Stop()
	}
	os.Exit(code)
}

// sharedPlane starts the shared plane on first use.
func sharedPlane(t *testing.T) (*ControlPlane, client.Client) {
	t.Helper()
	binDir := testBinDir(t)
	shared.once.Do(func() {
		shared.cp, shared.err = Start(context.Background(), Options{
			BinDir:         binDir,
			CRDDir:         filepath.Join("..", "..", "config", "crd"),
			DefinitionsDir: filepath.Join("..", "..", "config", "definitions"),
			KubeconfigPath: filepath.Join(os.TempDir(), "steward-localcp-test-kubeconfig-"+time.Now().Format("150405.000000")),
			StartTimeout:   3 * time.Minute, // see TestStart_ServesCRDsDefinitionsAndAReadyNodeUntilStopped
		})
	})
	if shared.err != nil {
		t.Fatalf("Start: %v", shared.err)
	}
	c, err := client.New(shared.cp.Config, client.Options{Scheme: manager.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	return shared.cp, c
}

func TestDeployment_GetsAnAvailableReplicaOnTheKwokNode(t *testing.T) {
	_, c := sharedPlane(t)
	ctx := context.Background()
	ns := newNamespace(t, c, "deploy")

	labels := map[string]string{"app": "web"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
			},
		},
	}
	if err := c.Create(ctx, dep); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(dep), dep); err != nil {
			return false, err
		}
		return dep.Status.AvailableReplicas == 1, nil
	})
	if err != nil {
		t.Fatalf("Deployment never got an available replica: %v; status %+v", err, dep.Status)
	}

	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels(labels)); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 {
		t.Fatalf("pods = %d, want 1", len(pods.Items))
	}
	pod := pods.Items[0]
	if pod.Spec.NodeName != NodeName || pod.Status.Phase != corev1.PodRunning || pod.Status.PodIP == "" {
		t.Errorf("pod %s: node %q, phase %q, IP %q; want Running on %s with an IP",
			pod.Name, pod.Spec.NodeName, pod.Status.Phase, pod.Status.PodIP, NodeName)
	}
}

// The acceptance test of `make run`: examples/01-hello-web.yaml, applied
// with the controller running, reaches Healthy.
func TestApplication_HelloWebBecomesHealthy(t *testing.T) {
	cp, c := sharedPlane(t)
	ctx, cancel := context.WithCancel(context.Background())
	opts := manager.NewOptions()
	opts.MetricsAddr, opts.HealthAddr = "0", "0"
	opts.SkipNameValidation = true
	done := make(chan error, 1)
	go func() { done <- manager.Run(ctx, cp.Config, opts) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("controller: %v", err)
		}
	})

	objs, err := decodeFile(filepath.Join("..", "..", "examples", "01-hello-web.yaml"))
	if err != nil || len(objs) != 1 {
		t.Fatalf("reading example: %d objects, %v", len(objs), err)
	}
	if err := apply(ctx, c, objs[0]); err != nil {
		t.Fatal(err)
	}

	app := &v1beta1.Application{}
	key := client.ObjectKeyFromObject(objs[0])
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, key, app); err != nil {
			return false, err
		}
		return v1beta1.IsConditionTrue(app.Status.Conditions, v1beta1.ConditionHealthy), nil
	})
	if err != nil {
		t.Fatalf("%s never became Healthy: %v; phase %q, conditions %+v, services %+v",
			key, err, app.Status.Phase, app.Status.Conditions, app.Status.Services)
	}
	if app.Status.Phase != v1beta1.ApplicationRunning {
		t.Errorf("phase = %q, want %q", app.Status.Phase, v1beta1.ApplicationRunning)
	}
	dep := &appsv1.Deployment{}
	if err := c.Get(ctx, key, dep); err != nil {
		t.Fatal(err)
	}
	if dep.Status.AvailableReplicas != 2 {
		t.Errorf("available replicas = %d, want the 2 of the scaler trait", dep.Status.AvailableReplicas)
	}
}

func newNamespace(t *testing.T, c client.Client, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := c.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}
