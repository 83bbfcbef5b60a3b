package render_test

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cli"
	"github.com/steward-oam/steward/internal/delivery"
	"github.com/steward-oam/steward/internal/render"
	"github.com/steward-oam/steward/internal/sandbox"
)

// fuzzRenderTimeout bounds one render of fuzzed input, around the
// evaluation budget (fuzzBudget): the evaluator pool stops an evaluation
// at its timeout, so a render that takes longer is a finding (the bound
// does not hold), not a slow machine.
const fuzzRenderTimeout = 30 * time.Second

// fuzzRenderer renders through the controller's evaluator pool, so that
// fuzzing covers the boundary between the controller and its evaluator
// processes: requests and answers on the pipe, the budget, and
// evaluators replaced after one is stopped.
func fuzzRenderer(f *testing.F) *render.Renderer {
	b := sandbox.DefaultBudget()
	b.Timeout = 2 * time.Second
	b.Memory = resource.MustParse("256Mi")
	r, pool, err := delivery.NewRenderer(b, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { pool.Close() })
	return r
}

// builtins are the definitions of config/definitions, loaded once.
var builtins = sync.OnceValues(func() (render.Definitions, error) {
	return cli.LoadDefinitions(filepath.Join("..", "..", "config", "definitions"))
})

// FuzzRender_Properties renders a component of a built-in type, with a
// built-in trait, whose properties are arbitrary bytes: JSON as the API
// server stores them, or YAML as `steward render` reads them. Properties
// are what every Application author controls; whatever they are, Render
// returns objects or an *Error, promptly, and renders the same objects
// again from its cache.
func FuzzRender_Properties(f *testing.F) {
	defs, err := builtins()
	if err != nil {
		f.Fatal(err)
	}
	components, traits := sortedKeys(defs.Components), sortedKeys(defs.Traits)
	r := fuzzRenderer(f)
	f.Fuzz(func(t *testing.T, compType uint8, props []byte, traitType uint8, traitProps []byte) {
		app := fuzzApp(components[int(compType)%len(components)], properties(props))
		if traitType != 0 {
			app.Spec.Components[0].Traits = []v1beta1.ApplicationTrait{{
				Type: traits[int(traitType-1)%len(traits)], Properties: properties(traitProps),
			}}
		}
		res, err := renderBounded(t, r, app, defs)
		checkResult(t, res, err)
		if err != nil {
			return
		}
		again, err := renderBounded(t, r, app, defs)
		if err != nil {
			t.Fatalf("second render failed: %v", err)
		}
		if !reflect.DeepEqual(cli.Objects(res), cli.Objects(again)) {
			t.Fatalf("rendering twice gave different objects:\n%s\n%s", toJSON(t, cli.Objects(res)), toJSON(t, cli.Objects(again)))
		}
	})
}

// FuzzRender_Template renders an arbitrary CUE template as the
// ComponentDefinition of a component, or as a TraitDefinition applied to a
// webservice component, with arbitrary properties. Definitions are written
// by users too (in an Application's own namespace): whatever the template,
// CheckTemplate and Render return promptly, Render returns objects or an
// *Error, and a template CheckTemplate refuses never renders.
func FuzzRender_Template(f *testing.F) {
	defs, err := builtins()
	if err != nil {
		f.Fatal(err)
	}
	r := fuzzRenderer(f)
	f.Fuzz(func(t *testing.T, template string, asTrait bool, props []byte) {
		kind := render.KindComponent
		if asTrait {
			kind = render.KindTrait
		}
		checkErr := make(chan error, 1)
		go func() { checkErr <- r.CheckTemplate(kind, "prod", "fuzzed", template) }()
		var refused error
		select {
		case refused = <-checkErr:
		case <-time.After(fuzzRenderTimeout):
			t.Fatalf("CheckTemplate did not return within %s", fuzzRenderTimeout)
		}

		d := render.Definitions{Components: map[string]*v1beta1.ComponentDefinition{}, Traits: map[string]*v1beta1.TraitDefinition{}}
		var app *v1beta1.Application
		if asTrait {
			d.Components["webservice"] = defs.Components["webservice"]
			d.Traits["fuzzed"] = traitDef("fuzzed", template, "")
			app = fuzzApp("webservice", &runtime.RawExtension{Raw: []byte(`{"image":"nginx:1.27","ports":[{"port":80,"expose":true}]}`)})
			app.Spec.Components[0].Traits = []v1beta1.ApplicationTrait{{Type: "fuzzed", Properties: properties(props)}}
		} else {
			d.Components["fuzzed"] = componentDef("fuzzed", template)
			app = fuzzApp("fuzzed", properties(props))
		}
		res, err := renderBounded(t, r, app, d)
		checkResult(t, res, err)
		var rerr *render.Error
		if refused != nil && err == nil && !(errors.As(refused, &rerr) && rerr.Reason == v1beta1.ReasonEvaluationBudgetExceeded) {
			t.Fatalf("CheckTemplate refused the template (%v) but it rendered", refused)
		}
	})
}

// fuzzApp is a one-component Application "shop" in "prod".
func fuzzApp(compType string, props *runtime.RawExtension) *v1beta1.Application {
	return &v1beta1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "prod", Labels: map[string]string{"team": "a"}},
		Spec: v1beta1.ApplicationSpec{Components: []v1beta1.ApplicationComponent{{
			Name: "web", Type: compType, Properties: props,
		}}},
	}
}

// properties turns fuzzed bytes into properties the way they arrive: JSON
// as it is, YAML converted to JSON as the CLI and the API server's clients
// do, and anything else as it is, for the renderer to refuse.
func properties(b []byte) *runtime.RawExtension {
	if len(b) == 0 || json.Valid(b) {
		return &runtime.RawExtension{Raw: b}
	}
	if j, err := yaml.YAMLToJSON(b); err == nil {
		return &runtime.RawExtension{Raw: j}
	}
	return &runtime.RawExtension{Raw: b}
}

// renderBounded renders app, failing the test when it takes longer than
// fuzzRenderTimeout.
func renderBounded(t *testing.T, r *render.Renderer, app *v1beta1.Application, d render.Definitions) (*render.Result, error) {
	t.Helper()
	type result struct {
		res *render.Result
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := r.Render(app, d, render.AppContext{AppRevision: "shop-v1", AppRevisionNum: 1})
		done <- result{res, err}
	}()
	select {
	case out := <-done:
		return out.res, out.err
	case <-time.After(fuzzRenderTimeout):
		t.Fatalf("Render did not return within %s", fuzzRenderTimeout)
		return nil, nil
	}
}

// checkResult checks what Render returned: an *Error and nothing else, or
// one rendered component per component of the app whose objects can be
// applied (they have an apiVersion, a kind and a name, and encode as JSON).
func checkResult(t *testing.T, res *render.Result, err error) {
	t.Helper()
	if err != nil {
		var rerr *render.Error
		if !errors.As(err, &rerr) {
			t.Fatalf("Render returned %T, not a *render.Error: %v", err, err)
		}
		if res != nil {
			t.Fatalf("Render returned objects with its error %v", err)
		}
		if rerr.Err == nil || rerr.Err.Error() == "" {
			t.Fatalf("Render's error says nothing of what is wrong: %q", err)
		}
		return
	}
	if res == nil || len(res.Components) != 1 {
		t.Fatalf("Render returned no error and %+v", res)
	}
	for _, obj := range cli.Objects(res) {
		if obj.GetAPIVersion() == "" || obj.GetKind() == "" || obj.GetName() == "" {
			t.Fatalf("rendered object without apiVersion, kind or name: %v", obj.Object)
		}
		if _, err := json.Marshal(obj.Object); err != nil {
			t.Fatalf("rendered object does not encode: %v", err)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
