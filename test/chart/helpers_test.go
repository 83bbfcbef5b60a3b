package chart

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// root is the repository root, relative to this package.
var root = filepath.Join("..", "..")

// kubeVersion is the Kubernetes version the chart is rendered for: that of
// envtest's kube-apiserver (hack/tools/versions.env).
const kubeVersion = "v1.37.2"

// releaseNamespace is where the tests install the chart.
const releaseNamespace = "steward-system"

// require skips the test when a tool is missing, or fails it in CI.
func require(t *testing.T, what, fix string) {
	t.Helper()
	msg := what + " is missing: " + fix
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// helm returns the path of bin/helm.
func helm(t *testing.T) string {
	t.Helper()
	path, err := filepath.Abs(filepath.Join(root, "bin", "helm"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		require(t, "bin/helm", "run hack/install-helm.sh")
	}
	return path
}

// runHelm runs bin/helm from the repository root and returns its output.
func runHelm(t *testing.T, args ...string) ([]byte, error) {
	t.Helper()
	cmd := exec.Command(helm(t), args...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, errors.New(strings.TrimSpace(stderr.String()) + " (" + err.Error() + ")")
	}
	return out, nil
}

// render runs `helm template` on the chart with extra arguments (--set ...)
// and returns the objects, CRDs excluded.
func render(t *testing.T, args ...string) []*unstructured.Unstructured {
	t.Helper()
	// The objects for KubeVela's CLI (templates/kubevela-tools.yaml: views,
	// a Deployment that never runs, vela-system) are off here so the tests
	// of the controller's own objects count only those; kubevela_tools_test.go
	// turns them on (a later --set wins).
	base := []string{"template", "steward", "charts/steward", "--namespace", releaseNamespace, "--kube-version", kubeVersion,
		"--set", "kubevelaTools.enabled=false"}
	out, err := runHelm(t, append(base, args...)...)
	if err != nil {
		t.Fatalf("helm template %s: %v", strings.Join(args, " "), err)
	}
	objs, err := decodeObjects(out)
	if err != nil {
		t.Fatalf("helm template output: %v", err)
	}
	if len(objs) == 0 {
		t.Fatal("helm template rendered nothing")
	}
	return objs
}

// decodeObjects reads a stream of YAML documents, skipping empty ones.
func decodeObjects(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		err := dec.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
}

// find returns the rendered objects of one kind.
func find(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

// one returns the only rendered object of a kind.
func one(t *testing.T, objs []*unstructured.Unstructured, kind string) *unstructured.Unstructured {
	t.Helper()
	found := find(objs, kind)
	if len(found) != 1 {
		t.Fatalf("%d objects of kind %s, want 1", len(found), kind)
	}
	return found[0]
}

// readObject reads a one-document YAML file.
func readObject(t *testing.T, path string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := decodeObjects(data)
	if err != nil || len(objs) != 1 {
		t.Fatalf("%s: want one object, got %d (%v)", path, len(objs), err)
	}
	return objs[0]
}
