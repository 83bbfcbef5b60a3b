package render_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cli"
	"github.com/steward-oam/steward/internal/delivery"
	"github.com/steward-oam/steward/internal/render"
	"github.com/steward-oam/steward/internal/sandbox"
)

// unsupportedDefinitions are corpus definitions Steward does not render,
// with the reason docs/compatibility.md gives.
var unsupportedDefinitions = map[string]string{}

// compatDir finds the KubeVela compatibility corpus: $STEWARD_COMPAT_DIR,
// else ../shared/compat from the repository root. A clone without the
// corpus beside it skips the tests that need it; a STEWARD_COMPAT_DIR that
// does not hold it fails them (CI sets it).
func compatDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("STEWARD_COMPAT_DIR")
	explicit := dir != ""
	if !explicit {
		dir = filepath.Join("..", "..", "..", "shared", "compat")
	}
	if _, err := os.Stat(filepath.Join(dir, "cases")); err != nil {
		if !explicit {
			t.Skipf("compatibility corpus not found at %s: set STEWARD_COMPAT_DIR to the directory holding KubeVela's cases/ and definitions/ to run this test", dir)
		}
		t.Fatalf("compatibility corpus not found at STEWARD_COMPAT_DIR=%s (the directory holding cases/ and definitions/): %v", dir, err)
	}
	return dir
}

func compatCases(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, "cases"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		t.Fatalf("no cases in %s/cases", dir)
	}
	return names
}

func TestCompat_CasesRenderLikeKubeVela(t *testing.T) {
	dir := compatDir(t)
	defs, err := cli.LoadDefinitions(filepath.Join(dir, "definitions"))
	if err != nil {
		t.Fatal(err)
	}
	r := budgetedRenderer(t)
	for _, name := range compatCases(t, dir) {
		t.Run(name, func(t *testing.T) {
			checkCase(t, r, defs, filepath.Join(dir, "cases", name))
		})
	}
}

func TestCompat_BuiltinDefinitionsRenderLikeKubeVela(t *testing.T) {
	dir := compatDir(t)
	builtin, err := cli.LoadDefinitions(filepath.Join("..", "..", "config", "definitions"))
	if err != nil {
		t.Fatal(err)
	}
	r := budgetedRenderer(t)
	covered := 0
	for _, name := range compatCases(t, dir) {
		caseDir := filepath.Join(dir, "cases", name)
		app, err := cli.LoadApplication(filepath.Join(caseDir, "app.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if !usesOnly(app.Spec.Components, builtin) {
			continue
		}
		covered++
		t.Run(name, func(t *testing.T) { checkCase(t, r, builtin, caseDir) })
	}
	if covered == 0 {
		t.Fatal("no compatibility case uses only built-in definitions")
	}
}

func TestCompat_DefinitionsCompile(t *testing.T) {
	dir := compatDir(t)
	defs, err := cli.LoadDefinitions(filepath.Join(dir, "definitions"))
	if err != nil {
		t.Fatal(err)
	}
	r := budgetedRenderer(t)
	check := func(kind, name, tmpl string) {
		t.Run(name, func(t *testing.T) {
			err := r.CheckTemplate(kind, "vela-system", name, tmpl)
			if reason, ok := unsupportedDefinitions[name]; ok {
				if err == nil {
					t.Fatalf("listed unsupported (%s) but compiles: update the list and docs/compatibility.md", reason)
				}
				t.Skipf("unsupported: %s", reason)
			}
			if err != nil {
				t.Fatal(err)
			}
		})
	}
	total := 0
	for n, d := range defs.Components {
		check(render.KindComponent, n, d.Spec.Schematic.CUE.Template)
		total++
	}
	for n, d := range defs.Traits {
		check(render.KindTrait, n, d.Spec.Schematic.CUE.Template)
		total++
	}
	for n, d := range defs.Policies {
		check(render.KindPolicy, n, d.Spec.Schematic.CUE.Template)
		total++
	}
	if total != 53 {
		t.Errorf("corpus holds %d definitions, docs/compatibility.md lists 53", total)
	}
}

func usesOnly(comps []v1beta1.ApplicationComponent, defs render.Definitions) bool {
	for _, c := range comps {
		if defs.Components[c.Type] == nil {
			return false
		}
		for _, t := range c.Traits {
			if defs.Traits[t.Type] == nil {
				return false
			}
		}
	}
	return true
}

func checkCase(t *testing.T, r *render.Renderer, defs render.Definitions, caseDir string) {
	t.Helper()
	app, err := cli.LoadApplication(filepath.Join(caseDir, "app.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Render(app, defs, render.AppContext{})
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	want := readExpected(t, filepath.Join(caseDir, "expected.yaml"))
	got := map[string]map[string]any{}
	for _, o := range cli.Objects(res) {
		got[objectID(o.Object)] = comparable(t, o)
	}
	for id, w := range want {
		g, ok := got[id]
		if !ok {
			t.Errorf("missing object %s", id)
			continue
		}
		if !reflect.DeepEqual(g, w) {
			gy, _ := yaml.Marshal(g)
			wy, _ := yaml.Marshal(w)
			t.Errorf("object %s differs\n--- got\n%s--- want\n%s", id, gy, wy)
		}
	}
	for id := range got {
		if _, ok := want[id]; !ok {
			t.Errorf("extra object %s", id)
		}
	}
}

func readExpected(t *testing.T, path string) map[string]map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, doc := range strings.Split(string(data), "\n---") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out[objectID(u.Object)] = comparable(t, u)
	}
	return out
}

func objectID(o map[string]any) string {
	u := unstructured.Unstructured{Object: o}
	return fmt.Sprintf("%s/%s %s/%s", u.GetAPIVersion(), u.GetKind(), u.GetNamespace(), u.GetName())
}

// bookkeeping are the label and annotation prefixes the corpus comparison
// ignores at the top level of metadata.
var bookkeeping = []string{"app.oam.dev/", "oam.dev/", "workload.oam.dev/", "trait.oam.dev/"}

// comparable applies the corpus comparison rule: numbers by value (via a
// JSON round trip to float64), bookkeeping labels and annotations dropped,
// empty labels/annotations equal to absent.
func comparable(t *testing.T, u *unstructured.Unstructured) map[string]any {
	t.Helper()
	b, err := json.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	meta, _ := out["metadata"].(map[string]any)
	for _, f := range []string{"labels", "annotations"} {
		m, _ := meta[f].(map[string]any)
		for k := range m {
			for _, p := range bookkeeping {
				if strings.HasPrefix(k, p) {
					delete(m, k)
				}
			}
		}
		if meta != nil && len(m) == 0 {
			delete(meta, f)
		}
	}
	return out
}

// budgetedRenderer renders as the controller does, in evaluator processes
// with the default evaluation budget: the corpus must not trip it.
func budgetedRenderer(t *testing.T) *render.Renderer {
	t.Helper()
	r, pool, err := delivery.NewRenderer(sandbox.DefaultBudget(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close() })
	return r
}
