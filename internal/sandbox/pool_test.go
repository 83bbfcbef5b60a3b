package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/steward-oam/steward/internal/cueeval"
	"github.com/steward-oam/steward/internal/sandbox/sandboxtest"
)

const configMap = `parameter: {name: string, replicas: *1 | int}
output: {apiVersion: "v1", kind: "ConfigMap", metadata: name: parameter.name, data: {app: context.name, replicas: "\(parameter.replicas)"}}
outputs: svc: {apiVersion: "v1", kind: "Service", metadata: name: parameter.name}
`

// renderRequest renders src as the component definition name.
func renderRequest(name, src string) *cueeval.Request {
	return &cueeval.Request{Render: &cueeval.TemplateInput{
		Source:  cueeval.Source{Kind: cueeval.KindComponent, Namespace: "tenant", Name: name, Version: "v/" + fmt.Sprint(len(src)), Text: src},
		Context: []byte(`{"name":"web","namespace":"tenant"}`), Params: []byte(`{"name":"web"}`),
	}}
}

type countingObserver struct {
	started   atomic.Int32
	evaluated atomic.Int32
	cached    atomic.Int32
}

func (c *countingObserver) Evaluated(_ string, cached bool, _ time.Duration) {
	c.evaluated.Add(1)
	if cached {
		c.cached.Add(1)
	}
}
func (c *countingObserver) EvaluatorStarted() { c.started.Add(1) }

func newPool(t *testing.T, opts Options) *Pool {
	t.Helper()
	p, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func TestPool_AnswersAsTheInProcessEvaluator(t *testing.T) {
	p := newPool(t, Options{Evaluators: 1})
	req := renderRequest("cm", configMap)
	want, err := cueeval.NewLocal(0).Evaluate(req)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 { // compiled, then from the evaluator's cache
		got, err := p.Evaluate(req)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Render, want.Render) {
			t.Fatalf("pass %d: the pool rendered %s, in process %s", i, toJSON(got.Render), toJSON(want.Render))
		}
		if hit := got.Cache[0].Hit; hit != (i == 1) {
			t.Errorf("pass %d: cache hit %v", i, hit)
		}
	}
	// A template at fault is an *cueeval.Error with its path, as in process.
	bad := renderRequest("bad", `parameter: {name: int}
output: {apiVersion: "v1", kind: "ConfigMap", metadata: name: "x"}`)
	_, err = p.Evaluate(bad)
	var ee *cueeval.Error
	if !errors.As(err, &ee) || ee.Path != "name" || !strings.Contains(ee.Message, "conflicting values") {
		t.Fatalf("got %v, want the properties refused at name", err)
	}
}

// TestPool_StopsEveryAttack is issue 27's list: whatever a template does,
// the evaluation ends within its timeout with a budget error, and the
// pool goes on evaluating.
func TestPool_StopsEveryAttack(t *testing.T) {
	const timeout = 3 * time.Second
	p := newPool(t, Options{Evaluators: 1, Timeout: timeout, Memory: 256 << 20})
	for name, src := range sandboxtest.Attacks {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			_, err := p.Evaluate(renderRequest(strings.ReplaceAll(name, " ", "-"), src))
			took := time.Since(start)
			var be *cueeval.BudgetError
			if !errors.As(err, &be) {
				t.Fatalf("got %v, want a budget error", err)
			}
			t.Logf("%v after %s", err, took.Round(time.Millisecond))
			if took > timeout+5*time.Second {
				t.Errorf("took %s, over the %s timeout", took, timeout)
			}
			res, err := p.Evaluate(renderRequest("cm", configMap))
			if err != nil || res.Render.Output == nil {
				t.Fatalf("the pool does not evaluate after the attack: %v", err)
			}
		})
	}
}

func TestPool_TheMemoryLimitStopsStringDoubling(t *testing.T) {
	p := newPool(t, Options{Evaluators: 1, Timeout: time.Minute, Memory: 256 << 20,
		Flags: map[cueeval.Limit]string{cueeval.LimitMemory: "--cue-eval-memory-limit"}})
	_, err := p.Evaluate(renderRequest("doubling", sandboxtest.Doubling(40)))
	var be *cueeval.BudgetError
	if !errors.As(err, &be) || be.Limit != cueeval.LimitMemory {
		t.Fatalf("got %v, want the memory limit", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "256Mi") || !strings.Contains(msg, "--cue-eval-memory-limit") {
		t.Errorf("the message does not say the limit and its flag: %s", msg)
	}
}

// TestPool_RemembersFailures: the same request that hit a limit is
// answered at once, without an evaluator, until its back-off ends; any
// other request is evaluated.
func TestPool_RemembersFailures(t *testing.T) {
	obs := &countingObserver{}
	p := newPool(t, Options{Evaluators: 1, Timeout: 2 * time.Second, Memory: 256 << 20, Observer: obs, RetryBase: time.Hour})
	attack := renderRequest("comprehension", sandboxtest.Attacks["comprehension"])
	if _, err := p.Evaluate(attack); err == nil {
		t.Fatal("the attack evaluated")
	}
	start := time.Now()
	_, err := p.Evaluate(attack)
	var be *cueeval.BudgetError
	if !errors.As(err, &be) || be.Limit != cueeval.LimitTime {
		t.Fatalf("the second time: %v, want the time limit again", err)
	}
	if took := time.Since(start); took > time.Second || obs.cached.Load() != 1 || obs.started.Load() != 1 {
		t.Fatalf("the second time took %s (%d remembered, %d evaluators started): it was evaluated again", took, obs.cached.Load(), obs.started.Load())
	}
	if _, err := p.Evaluate(renderRequest("cm", configMap)); err != nil {
		t.Fatal(err)
	}
	if obs.started.Load() != 2 {
		t.Fatalf("%d evaluators started, want a second one after the first was stopped", obs.started.Load())
	}
}

func TestPool_BoundsWhatARenderReturns(t *testing.T) {
	p := newPool(t, Options{Evaluators: 1, ObjectBytes: 4 << 10, ResponseBytes: 64 << 10})
	big := `parameter: {}
output: {apiVersion: "v1", kind: "ConfigMap", data: x: "` + strings.Repeat("x", 8<<10) + `"}`
	_, err := p.Evaluate(renderRequest("big", big))
	var be *cueeval.BudgetError
	if !errors.As(err, &be) || be.Limit != cueeval.LimitObjectBytes {
		t.Fatalf("got %v, want the object size limit", err)
	}
	many := "import \"list\"\nparameter: {}\noutputs: {for i in list.Range(0, 100, 1) {\"o\\(i)\": {apiVersion: \"v1\", kind: \"ConfigMap\", data: x: \"" +
		strings.Repeat("y", 1<<10) + "\"}}}\n"
	_, err = p.Evaluate(renderRequest("many", many))
	if !errors.As(err, &be) || be.Limit != cueeval.LimitRenderBytes {
		t.Fatalf("got %v, want the render size limit", err)
	}
}

// TestPool_AnEvaluatorKilledWhileIdleBlamesNoRequest: the kernel's OOM
// killer takes evaluators first; the next request gets a new one.
func TestPool_AnEvaluatorKilledWhileIdleBlamesNoRequest(t *testing.T) {
	p := newPool(t, Options{Evaluators: 1})
	if _, err := p.Evaluate(renderRequest("cm", configMap)); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	w := p.idle[0]
	p.mu.Unlock()
	if err := syscall.Kill(w.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-w.done
	if _, err := p.Evaluate(renderRequest("cm", configMap)); err != nil {
		t.Fatalf("after its evaluator was killed: %v", err)
	}
}

// TestPool_EvaluatorsEndWithTheController: an evaluator whose controller
// is gone (its stdin closes, or the controller is killed) exits.
func TestPool_EvaluatorsEndWithThePool(t *testing.T) {
	p := newPool(t, Options{Evaluators: 2})
	if _, err := p.Evaluate(renderRequest("cm", configMap)); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	w := p.idle[0]
	p.mu.Unlock()
	p.Close()
	select {
	case <-w.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the evaluator outlived the pool")
	}
	if _, err := p.Evaluate(renderRequest("cm", configMap)); !errors.Is(err, cueeval.ErrUnavailable) {
		t.Fatalf("a closed pool evaluated, or failed otherwise: %v", err)
	}
	for deadline := time.Now().Add(5 * time.Second); p.CPUTime() <= 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the pool counted no CPU time for its evaluator")
		}
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestPool_AWarmEvaluatorIsNotBlamedAlone: an evaluator that served other
// requests holds their templates; one that runs out of memory is replaced
// and the request sent once more before the memory limit is reported.
func TestPool_AWarmEvaluatorIsNotBlamedAlone(t *testing.T) {
	obs := &countingObserver{}
	p := newPool(t, Options{Evaluators: 1, Timeout: time.Minute, Memory: 256 << 20, Observer: obs})
	if _, err := p.Evaluate(renderRequest("cm", configMap)); err != nil {
		t.Fatal(err)
	}
	_, err := p.Evaluate(renderRequest("doubling", sandboxtest.Doubling(40)))
	var be *cueeval.BudgetError
	if !errors.As(err, &be) || be.Limit != cueeval.LimitMemory {
		t.Fatalf("got %v, want the memory limit", err)
	}
	if n := obs.started.Load(); n != 2 {
		t.Fatalf("%d evaluators started, want 2: the warm one, and a fresh one the request was sent to again", n)
	}
}

// TestPool_RemembersADefinitionThatBustsTheBudgetInItsNamespace: a tenant
// changing the input (its Application's spec) gets no new budget for the
// same definition version; another namespace is not affected.
func TestPool_RemembersADefinitionThatBustsTheBudgetInItsNamespace(t *testing.T) {
	obs := &countingObserver{}
	p := newPool(t, Options{Evaluators: 1, Timeout: 2 * time.Second, Memory: 256 << 20, Observer: obs, RetryBase: time.Hour})
	attack := func(tenant, name string) *cueeval.Request {
		r := renderRequest("comprehension", sandboxtest.Attacks["comprehension"])
		r.Tenant = tenant
		r.Render.Context = []byte(`{"name":"` + name + `","namespace":"` + tenant + `"}`)
		return r
	}
	if _, err := p.Evaluate(attack("team-a", "web")); err == nil {
		t.Fatal("the attack evaluated")
	}
	start := time.Now()
	if _, err := p.Evaluate(attack("team-a", "web-2")); err == nil || time.Since(start) > time.Second || obs.cached.Load() != 1 {
		t.Fatalf("another input in the same namespace: %v after %s (%d remembered): evaluated again", err, time.Since(start), obs.cached.Load())
	}
	start = time.Now()
	if _, err := p.Evaluate(attack("team-b", "web")); err == nil || time.Since(start) < time.Second {
		t.Fatalf("another namespace: %v after %s: answered from team-a's failure", err, time.Since(start))
	}
}

// TestPool_AnEmptyTemplateRendersNothing: KubeVela accepts a definition
// with an empty template; its version is not a text left out.
func TestPool_AnEmptyTemplateRendersNothing(t *testing.T) {
	p := newPool(t, Options{Evaluators: 1})
	for range 2 {
		res, err := p.Evaluate(renderRequest("empty", ""))
		if err != nil || res.Render == nil || res.Render.Output != nil {
			t.Fatalf("got %+v, %v", res, err)
		}
	}
}
