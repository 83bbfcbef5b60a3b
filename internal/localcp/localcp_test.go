/*
Copyright 2026 The Steward Authors.

Licensed under the Apache License, Version 2.0.
*/

package localcp

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

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

func TestStart_ServesCRDsAndDefinitionsUntilStopped(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	defsDir := filepath.Join(dir, "definitions")
	writeFile(t, filepath.Join(defsDir, "core.yaml"), definitionsYAML)
	writeFile(t, filepath.Join(defsDir, "README.md"), "not a manifest")
	kubeconfig := filepath.Join(dir, "kube", "config")

	cp, err := Start(ctx, Options{
		BinDir:         testBinDir(t),
		CRDDir:         filepath.Join("..", "..", "config", "crd"),
		DefinitionsDir: defsDir,
		KubeconfigPath: kubeconfig,
	})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = cp.Stop() })
	if cp.Definitions != 2 {
		t.Errorf("Definitions = %d, want 2", cp.Definitions)
	}
	children := ownControlPlaneProcesses(t)
	if runtime.GOOS == "linux" && len(children) != 2 {
		t.Errorf("control plane processes = %v, want etcd and kube-apiserver", children)
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
	for _, kind := range []string{"ApplicationList", "ResourceTrackerList", "PolicyDefinitionList"} {
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

	// Applying again updates in place; a missing dir applies nothing.
	if n, err := ApplyDefinitions(ctx, c, defsDir, DefaultDefinitionNamespace); err != nil || n != 2 {
		t.Errorf("re-apply = %d, %v; want 2, nil", n, err)
	}
	if n, err := ApplyDefinitions(ctx, c, filepath.Join(dir, "missing"), DefaultDefinitionNamespace); err != nil || n != 0 {
		t.Errorf("apply missing dir = %d, %v; want 0, nil", n, err)
	}
	// The definitions `steward up` bundles are valid against the CRDs.
	if _, err := ApplyDefinitions(ctx, c, filepath.Join("..", "..", "config", "definitions"), DefaultDefinitionNamespace); err != nil {
		t.Errorf("applying config/definitions: %v", err)
	}

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
	if _, err := os.Stat(kubeconfig); !os.IsNotExist(err) {
		t.Errorf("kubeconfig left after Stop: %v", err)
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
// falling back to the repository's bin/k8s for a bare `go test`.
func testBinDir(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir
	}
	dir, err := filepath.Abs(filepath.Join("..", "..", "bin", "k8s"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// ownControlPlaneProcesses lists the etcd and kube-apiserver processes this
// test process started, from /proc (Linux only; nil elsewhere).
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
		if comm == "etcd" || comm == "kube-apiserver" {
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
