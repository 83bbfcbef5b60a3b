package render_test

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cueeval"
	"github.com/steward-oam/steward/internal/render"
)

// countingEvaluator counts the evaluations it passes on, each after delay.
type countingEvaluator struct {
	inner cueeval.Evaluator
	delay time.Duration
	n     atomic.Int32
}

func (c *countingEvaluator) Evaluate(req *cueeval.Request) (*cueeval.Response, error) {
	c.n.Add(1)
	time.Sleep(c.delay)
	return c.inner.Evaluate(req)
}

// manyComponents is an app of n components of type "big", whose template
// renders four ConfigMaps of 256 KiB each.
func manyComponents(t *testing.T, n int) (*v1beta1.Application, render.Definitions) {
	big := componentDef("big", `import "list"
parameter: {}
outputs: {for i in list.Range(0, 4, 1) {"cm-\(i)": {apiVersion: "v1", kind: "ConfigMap", metadata: name: "\(context.name)-\(i)", data: x: strings.Repeat("x", 262144)}}}
`)
	big.Spec.Schematic.CUE.Template = "import \"strings\"\n" + big.Spec.Schematic.CUE.Template
	a := app(t, map[string]any{})
	a.Spec.Components = nil
	for i := range n {
		a.Spec.Components = append(a.Spec.Components, v1beta1.ApplicationComponent{Name: fmt.Sprintf("c%d", i), Type: "big"})
	}
	return a, render.Definitions{Components: map[string]*v1beta1.ComponentDefinition{"big": big}}
}

// TestRender_StopsAtTheFirstEvaluationPastTheLimits: a version is held to
// the render size and object limits as each evaluation comes back, so
// that the controller never holds much more than the limits: the
// components after the one that passes them are not evaluated.
func TestRender_StopsAtTheFirstEvaluationPastTheLimits(t *testing.T) {
	for _, tc := range []struct {
		name   string
		limits render.Limits
		want   cueeval.Limit
	}{
		{"size", render.Limits{TotalBytes: 4 << 20, TotalBytesFlag: "--max-render-size"}, cueeval.LimitRenderBytes},
		{"objects", render.Limits{Objects: 10, ObjectsFlag: "--max-render-objects"}, cueeval.LimitObjects},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, defs := manyComponents(t, 12)
			ev := &countingEvaluator{inner: cueeval.NewLocal(0)}
			r := render.NewRenderer(render.WithEvaluator(ev), render.WithLimits(tc.limits))
			_, err := r.Render(a, defs, render.AppContext{})
			var rerr *render.Error
			var le *render.LimitError
			if !errors.As(err, &rerr) || rerr.Reason != v1beta1.ReasonEvaluationBudgetExceeded || !errors.As(err, &le) || le.Limit != tc.want {
				t.Fatalf("got %v, want the %s limit", err, tc.want)
			}
			if !strings.Contains(err.Error(), "--max-render-") || rerr.Component == "" {
				t.Errorf("the message does not name the component and the flag: %v", err)
			}
			if n := ev.n.Load(); n >= 12 {
				t.Errorf("%d of 12 components evaluated: the render went on past the limit", n)
			}
		})
	}
}

// TestRender_TheVersionAsAWholeHasATimeLimit: many evaluations, each
// within the evaluator's timeout, must not hold a reconcile for their sum.
func TestRender_TheVersionAsAWholeHasATimeLimit(t *testing.T) {
	a, defs := manyComponents(t, 10)
	ev := &countingEvaluator{inner: cueeval.NewLocal(0), delay: 40 * time.Millisecond}
	r := render.NewRenderer(render.WithEvaluator(ev), render.WithLimits(render.Limits{Time: 100 * time.Millisecond, TimeFlag: "3 × --cue-eval-timeout"}))
	u := &render.Usage{}
	_, err := r.RenderCounted(a, defs, render.AppContext{}, u)
	var le *render.LimitError
	if !errors.As(err, &le) || le.Limit != cueeval.LimitTime || !strings.Contains(err.Error(), "takes more than 100ms") {
		t.Fatalf("got %v, want the render's time limit", err)
	}
	if n := ev.n.Load(); n >= 10 {
		t.Errorf("all %d components evaluated", n)
	}
}
