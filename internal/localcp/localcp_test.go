/*
Copyright 2026 The Steward Authors.

Licensed under the Apache License, Version 2.0.
*/

package localcp

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const definitionsYAML = `apiVersion: core.oam.dev/v1beta1
kind: ComponentDefinition
metadata:
  name: webservice
spec:
  workload:
    definition: {apiVersion: apps/v1, kind: Deployment}
  schematic:
    cue:
      template: "output: {}"
---
apiVersion: core.oam.dev/v1beta1
kind: TraitDefinition
metadata:
  name: scaler
  namespace: vela-system
spec:
  schematic:
    cue:
      template: "patch: {}"
---
`

func TestStart_ServesCRDsDefinitionsAndAReadyNodeUntilStopped(t *testing.T) {
	ctx := context.Background()
	binDir := testBinDir(t)
	dir := t.TempDir()
	defsDir := filepath.Join(dir, "definitions")
	writeFile(t, filepath.Join(defsDir, "core.yaml"), definitionsYAML)
	writeFile(t, filepath.Join(defsDir, "README.md"), "not a manifest")
	kubeconfig := filepath.Join(dir, "kube", "config")

	var progress strings.Builder
	before := ownControlPlaneProcesses(t) // another test's plane may be running
	cp, err := Start(ctx, Options{
		BinDir:         binDir,
		CRDDir:         filepath.Join("..", "..", "config", "crd"),
		DefinitionsDir: defsDir,
		KubeconfigPath: kubeconfig,
		Progress:       &progress,
		// Beside other packages' API servers on a 2-core machine, each
		// step can take longer than the one-minute default.
		StartTimeout: 3 * time.Minute,
	})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	if cp.Definitions != 2 {
		t.Errorf("Definitions = %d, want 2", cp.Definitions)
	}
	// The user is told what the plane is doing, in order.
	wantSteps := []string{"etcd up", "API server up", "CRDs installed", "kube-controller-manager up",
		"kube-scheduler up", "kwok up", "node " + NodeName + " Ready", "2 definitions installed in vela-system"}
	if got := progress.String(); !inOrder(got, wantSteps) {
		t.Errorf("progress = %q, want the steps %q in order", got, wantSteps)
	}
	var children []int
	for _, pid := range ownControlPlaneProcesses(t) {
		if !slices.Contains(before, pid) {
			children = append(children, pid)
		}
	}
	if runtime.GOOS == "linux" && len(children) != 5 {
		t.Errorf("control plane processes = %v, want etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok", children)
	}

	// The kubeconfig works on its own, as kubectl would use it.
	cfg, err := clientcmd.BuildConfigFromFlags("", cp.KubeconfigPath)
	if err != nil {
		t.Fatalf("loading kubeconfig: %v", err)
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatalf("client from kubeconfig: %v", err)
	}
	for _, kind := range []string{"ApplicationList", "ResourceTrackerList", "PolicyDefinitionList", "WorkflowStepDefinitionList"} {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(schema.GroupVersionKind{Group: "core.oam.dev", Version: "v1beta1", Kind: kind})
		if err := c.List(ctx, list); err != nil {
			t.Errorf("CRD not served: listing %s: %v", kind, err)
		}
	}
	for _, kind := range []string{"ComponentDefinition", "TraitDefinition"} {
		if _, err := getDefinition(ctx, c, kind); err != nil {
			t.Errorf("definition not installed: %v", err)
		}
	}

	// The kwok node is Ready and schedulable.
	node := &corev1.Node{}
	if err := c.Get(ctx, client.ObjectKey{Name: NodeName}, node); err != nil {
		t.Fatalf("getting node: %v", err)
	}
	if why := nodeNotSchedulable(node); why != "" {
		t.Errorf("node %s: %s; conditions %+v", NodeName, why, node.Status.Conditions)
	}

	// Applying an edited file changes the definition in place, written by
	// our field manager; a missing dir applies nothing.
	writeFile(t, filepath.Join(defsDir, "core.yaml"), strings.Replace(definitionsYAML, `template: "patch: {}"`, `template: "patch: {metadata: {}}"`, 1))
	if n, err := ApplyDefinitions(ctx, c, defsDir, DefaultDefinitionNamespace); err != nil || n != 2 {
		t.Errorf("re-apply = %d, %v; want 2, nil", n, err)
	}
	trait, err := getDefinition(ctx, c, "TraitDefinition")
	if err != nil {
		t.Fatal(err)
	}
	if tmpl, _, _ := unstructured.NestedString(trait.Object, "spec", "schematic", "cue", "template"); tmpl != "patch: {metadata: {}}" {
		t.Errorf("template after re-apply = %q", tmpl)
	}
	if managers := fieldManagers(trait); len(managers) != 1 || managers[0] != FieldOwner {
		t.Errorf("field managers = %v, want only %s (server-side apply)", managers, FieldOwner)
	}
	if n, err := ApplyDefinitions(ctx, c, filepath.Join(dir, "missing"), DefaultDefinitionNamespace); err != nil || n != 0 {
		t.Errorf("apply missing dir = %d, %v; want 0, nil", n, err)
	}
	// The definitions `steward dev` bundles are valid against the CRDs.
	if _, err := ApplyDefinitions(ctx, c, filepath.Join("..", "..", "config", "definitions"), DefaultDefinitionNamespace); err != nil {
		t.Errorf("applying config/definitions: %v", err)
	}

	logDir := cp.LogDir
	if err := cp.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := cp.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	for _, pid := range children {
		if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); err == nil {
			t.Errorf("process %d still running after Stop", pid)
		}
	}
	for _, path := range []string{kubeconfig, logDir} {
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("%s left after Stop: %v", path, err)
		}
	}
}

func TestStart_RefusesToOverwriteForeignKubeconfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config")
	writeFile(t, path, "apiVersion: v1\nkind: Config\n")

	_, err := Start(context.Background(), Options{KubeconfigPath: path})
	if err == nil || !strings.Contains(err.Error(), "refusing to overwrite") {
		t.Fatalf("Start = %v, want refusal", err)
	}
}

func TestReadObjects(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		want    []string
		wantErr string
	}{
		{name: "empty dir"},
		{name: "multi-doc yaml and json, in file order", files: map[string]string{
			"b.yaml": definitionsYAML,
			"a.json": `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "first"}}`,
			"c.txt":  "ignored",
		}, want: []string{"ConfigMap/first", "ComponentDefinition/webservice", "TraitDefinition/scaler"}},
		{name: "object without kind", files: map[string]string{
			"bad.yaml": "apiVersion: v1\nmetadata: {name: x}\n",
		}, wantErr: "no apiVersion, kind or metadata.name"},
		{name: "malformed yaml", files: map[string]string{
			"bad.yaml": "kind: [",
		}, wantErr: "bad.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tt.files {
				writeFile(t, filepath.Join(dir, name), content)
			}
			objs, err := readObjects(dir)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range objs {
				got = append(got, o.GetKind()+"/"+o.GetName())
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("objects = %v, want %v", got, tt.want)
			}
		})
	}
}

func getDefinition(ctx context.Context, c client.Client, kind string) (*unstructured.Unstructured, error) {
	name := map[string]string{"ComponentDefinition": "webservice", "TraitDefinition": "scaler"}[kind]
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(schema.GroupVersionKind{Group: "core.oam.dev", Version: "v1beta1", Kind: kind})
	err := c.Get(ctx, client.ObjectKey{Namespace: DefaultDefinitionNamespace, Name: name}, obj)
	return obj, err
}

// testBinDir is where `make test` puts the binaries (KUBEBUILDER_ASSETS),
// falling back to the repository's bin/k8s for a bare `go test`. It skips
// the test when one of the plane's binaries is missing.
func testBinDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		var err error
		if dir, err = filepath.Abs(filepath.Join("..", "..", "bin", "k8s")); err != nil {
			t.Fatal(err)
		}
	}
	if err := checkBinaries(dir); err != nil {
		t.Skipf("skipping: the local control plane needs its binaries: %v", err)
	}
	return dir
}

// inOrder reports whether s contains each of subs, each after the previous.
func inOrder(s string, subs []string) bool {
	for _, sub := range subs {
		i := strings.Index(s, sub)
		if i < 0 {
			return false
		}
		s = s[i+len(sub):]
	}
	return true
}

func fieldManagers(obj *unstructured.Unstructured) []string {
	var managers []string
	for _, f := range obj.GetManagedFields() {
		managers = append(managers, f.Manager)
	}
	return managers
}

// ownControlPlaneProcesses lists the plane's processes this test process
// started, from /proc (Linux only; nil elsewhere). comm is cut at 15
// characters: kube-controller-manager shows as kube-controller.
func ownControlPlaneProcesses(t *testing.T) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// stat is "pid (comm) state ppid ..."; comm may contain spaces.
		s := string(stat)
		open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closing < open {
			continue
		}
		comm, rest := s[open+1:closing], strings.Fields(s[closing+1:])
		if len(rest) < 2 || rest[1] != strconv.Itoa(os.Getpid()) {
			continue
		}
		if slices.Contains([]string{etcdBin, kubeAPIServerBin, "kube-controller", kubeSchedulerBin, kwokBin}, comm) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFreeLoopbackAddr_SkipsABusyPreferredPort(t *testing.T) {
	busy, err := FreeLoopbackAddr(0)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", busy)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(busy)
	preferred, _ := strconv.Atoi(port)

	got, err := FreeLoopbackAddr(preferred)
	if err != nil {
		t.Fatal(err)
	}
	_, gotPort, _ := net.SplitHostPort(got)
	if n, _ := strconv.Atoi(gotPort); n <= preferred || n >= preferred+100 || !strings.HasPrefix(got, "127.0.0.1:") {
		t.Errorf("FreeLoopbackAddr(%d) with %s busy = %s, want a later loopback port", preferred, busy, got)
	}
	if n := preferred; n < firstPort || n > lastPort {
		t.Errorf("random port %d outside %d-%d, below the ephemeral range", n, firstPort, lastPort)
	}
}
