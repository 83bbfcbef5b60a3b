package admission_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/steward-oam/steward/internal/controller/controllertest"
	"github.com/steward-oam/steward/internal/controller/manager/managertest"
)

// compatDir is the KubeVela compatibility corpus: $STEWARD_COMPAT_DIR, else
// ../shared/compat beside the clone. Without it beside the clone the test
// is skipped; a STEWARD_COMPAT_DIR that does not hold it fails it (CI sets
// it).
func compatDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("STEWARD_COMPAT_DIR")
	explicit := dir != ""
	if !explicit {
		_, here, _, _ := runtime.Caller(0)
		dir = filepath.Join(filepath.Dir(here), "..", "..", "..", "shared", "compat")
	}
	if _, err := os.Stat(filepath.Join(dir, "definitions")); err != nil {
		if !explicit {
			t.Skipf("compatibility corpus not found at %s: set STEWARD_COMPAT_DIR to the directory holding KubeVela's definitions/ and workflowsteps/ to run this test", dir)
		}
		t.Fatalf("compatibility corpus not found at STEWARD_COMPAT_DIR=%s: %v", dir, err)
	}
	return dir
}

// warnings records the API server's warnings per object applied.
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.list
	w.list = nil
	return out
}

// A GitOps pipeline applies KubeVela's whole published definition set
// (vela-core's chart: components, traits, policies and the 36 workflow
// steps) to a Steward cluster: every one is admitted, those Steward cannot
// run with a warning saying so, as KubeVela admits them all.
func TestAdmission_AdmitsKubeVelaDefinitionSet(t *testing.T) {
	dir := compatDir(t)
	ns := controllertest.NewNamespace(t)
	managertest.Start(t, nil, admissionOptions(t))
	waitAdmission(t, ns)

	c, seen := warningClient(t)
	var files []string
	for _, sub := range []string{"definitions", "workflowsteps"} {
		found, err := filepath.Glob(filepath.Join(dir, sub, "*.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, found...)
	}
	sort.Strings(files)
	if len(files) < 80 {
		t.Fatalf("only %d definitions in %s", len(files), dir)
	}
	warned := map[string][]string{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(raw, &obj.Object); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		obj.SetNamespace(ns)
		name := obj.GetKind() + "/" + obj.GetName()
		if err := c.Create(context.Background(), obj); err != nil {
			t.Errorf("%s (%s) refused: %v", name, filepath.Base(f), err)
			continue
		}
		if w := seen.take(); len(w) > 0 {
			warned[name] = w
		}
	}
	for name, w := range warned {
		t.Logf("%s admitted with: %s", name, strings.Join(w, "; "))
	}
	// vela-core's own steps that import packages Steward does not provide
	// are admitted, saying what Steward cannot run.
	for _, step := range []string{"deploy", "check-metrics", "collect-service-endpoints"} {
		if !strings.Contains(strings.Join(warned["WorkflowStepDefinition/"+step], " "), "cannot run") {
			t.Errorf("WorkflowStepDefinition %s admitted without a warning saying what Steward cannot run (warnings: %v)", step, warned["WorkflowStepDefinition/"+step])
		}
	}
}
