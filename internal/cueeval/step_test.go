package cueeval

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// publishedStep reads the template of one of KubeVela's published step
// definitions from the compatibility corpus.
func publishedStep(t *testing.T, name string) string {
	t.Helper()
	dir := os.Getenv("STEWARD_COMPAT_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "compat")
	}
	raw, err := os.ReadFile(filepath.Join(dir, "workflowsteps", name+".yaml"))
	if os.IsNotExist(err) {
		t.Skipf("the compatibility corpus (../shared/compat) is absent: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	var def struct {
		Spec struct {
			Schematic struct {
				CUE struct {
					Template string `json:"template"`
				} `json:"cue"`
			} `json:"schematic"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &def); err != nil {
		t.Fatal(err)
	}
	return def.Spec.Schematic.CUE.Template
}

// runStep drives a step to its end with handle answering its provider
// actions, as the controller does; it returns the last round and the
// actions carried out in order.
func runStep(t *testing.T, l *Local, name, template, params string, outputs []NamedExpr, handle func(Action) any) (*StepRound, []Action) {
	t.Helper()
	in := &StepInput{
		Source:  Source{Kind: KindStep, Name: name, Text: template},
		Context: json.RawMessage(`{"name":"app","namespace":"team","appName":"app","stepName":"s1"}`),
		Params:  json.RawMessage(params),
		Outputs: outputs,
	}
	var ran []Action
	for range 20 {
		res, err := l.Evaluate(&Request{Step: in})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		r := res.Step
		if r.Done || r.Control != "" {
			return r, ran
		}
		for _, a := range r.Actions {
			ran = append(ran, a)
			raw, _ := json.Marshal(handle(a))
			in.Done = append(in.Done, ActionResult{Path: a.Path, Legacy: a.Legacy, Returns: raw})
		}
	}
	t.Fatalf("%s: did not end", name)
	return nil, nil
}

func TestStep_PublishedDefinitionsRunTheirActionsInOrder(t *testing.T) {
	l := NewLocal(0)
	t.Run("webhook reads the url from a Secret before posting", func(t *testing.T) {
		tpl := publishedStep(t, "webhook")
		r, ran := runStep(t, l, "webhook", tpl, `{"url":{"secretRef":{"name":"hook","key":"url"}},"data":{"hello":"world"}}`, nil, func(a Action) any {
			switch a.Provider + "." + a.Do {
			case "kube.read":
				return map[string]any{"value": map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "hook", "namespace": "team"}, "data": map[string]any{"url": "aHR0cDovLzEyNy4wLjAuMS9ob29r"}}}
			case "http.do":
				return map[string]any{"statusCode": 200, "body": "ok"}
			}
			t.Fatalf("unexpected action %+v", a)
			return nil
		})
		if !r.Done || len(ran) != 2 || ran[0].Do != "read" || ran[1].Do != "do" {
			t.Fatalf("want read then post, done: %+v %+v", r, ran)
		}
		if !strings.Contains(string(ran[1].Params), `"url":"http://127.0.0.1/hook"`) || !strings.Contains(string(ran[1].Params), `{\"hello\":\"world\"}`) {
			t.Fatalf("post params: %s", ran[1].Params)
		}
	})
	t.Run("request fails on a 4xx and waits for nothing else", func(t *testing.T) {
		tpl := publishedStep(t, "request")
		r, ran := runStep(t, l, "request", tpl, `{"url":"http://127.0.0.1/x","method":"GET"}`, nil, func(a Action) any {
			return map[string]any{"statusCode": 404, "body": "not found\n"}
		})
		if r.Control != StepFail || !strings.Contains(r.Message, "404") || len(ran) != 1 {
			t.Fatalf("want a failure naming 404 after one request: %+v %+v", r, ran)
		}
		r, _ = runStep(t, l, "request", tpl, `{"url":"http://127.0.0.1/x","method":"GET"}`, []NamedExpr{{Name: "v", Expr: "response.v"}}, func(a Action) any {
			return map[string]any{"statusCode": 200, "body": `{"v":"x"}`}
		})
		if !r.Done || string(r.Outputs["v"]) != `"x"` {
			t.Fatalf("want done with output v: %+v", r)
		}
	})
	t.Run("print-message-in-status sets the message", func(t *testing.T) {
		r, ran := runStep(t, l, "print-message-in-status", publishedStep(t, "print-message-in-status"), `{"message":"hello"}`, nil, nil)
		if !r.Done || r.Message != "hello" || len(ran) != 0 {
			t.Fatalf("%+v %+v", r, ran)
		}
	})
	t.Run("read-object exports what it read", func(t *testing.T) {
		r, _ := runStep(t, l, "read-object", publishedStep(t, "read-object"), `{"name":"cm","kind":"ConfigMap","apiVersion":"v1"}`, []NamedExpr{{Name: "d", Expr: "output.$returns.value.data"}}, func(a Action) any {
			return map[string]any{"value": map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "cm", "namespace": "default"}, "data": map[string]any{"k": "v"}}}
		})
		if !r.Done || string(r.Outputs["d"]) != `{"k":"v"}` {
			t.Fatalf("%+v", r)
		}
	})
	t.Run("notification to slack", func(t *testing.T) {
		_, ran := runStep(t, l, "notification", publishedStep(t, "notification"), `{"slack":{"url":{"value":"http://127.0.0.1/slack"},"message":{"text":"deployed"}}}`, nil, func(a Action) any {
			return map[string]any{"statusCode": 200, "body": "ok"}
		})
		if len(ran) != 1 || !strings.Contains(string(ran[0].Params), "deployed") {
			t.Fatalf("%+v", ran)
		}
	})
}

func TestStep_LegacyOpActionsFillTheirOwnFields(t *testing.T) {
	tpl := `import "vela/op"
read: op.#Read & {value: {apiVersion: "v1", kind: "ConfigMap", metadata: {name: "a", namespace: "n"}}}
wait: op.#ConditionalWait & {continue: read.value.data.ready == "yes", message: "waiting for a"}
`
	l := NewLocal(0)
	r, ran := runStep(t, l, "legacy", tpl, `{}`, nil, func(a Action) any {
		return map[string]any{"value": map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a", "namespace": "n"}, "data": map[string]any{"ready": "no"}}}
	})
	if r.Control != StepWait || r.Message != "waiting for a" || len(ran) != 1 || ran[0].Legacy != "read" || ran[0].Provider != "kube" {
		t.Fatalf("%+v %+v", r, ran)
	}
}

func TestStep_UnknownPackageIsNamed(t *testing.T) {
	_, err := NewLocal(0).Evaluate(&Request{Step: &StepInput{Source: Source{Kind: KindStep, Name: "q", Text: "import \"vela/query\"\nx: query.#Foo\n"}}})
	if err == nil || !strings.Contains(err.Error(), `"vela/query"`) {
		t.Fatalf("want the package named, got %v", err)
	}
}

// Every one of KubeVela's 36 published step definitions compiles with
// the packages Steward provides, or is refused naming the package it
// imports that Steward does not provide (docs/workflow.md lists them).
func TestStep_EveryPublishedDefinitionCompilesOrNamesWhatIsMissing(t *testing.T) {
	dir := os.Getenv("STEWARD_COMPAT_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "compat")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "workflowsteps", "*.yaml"))
	if len(files) == 0 {
		t.Skip("the compatibility corpus (../shared/compat) is absent")
	}
	if len(files) != 36 {
		t.Fatalf("%d published step definitions, want 36", len(files))
	}
	refused := map[string]string{"check-metrics": `"vela/metrics"`, "collect-service-endpoints": `"vela/query"`, "deploy": `"vela/multicluster"`}
	l := NewLocal(0)
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		src := Source{Kind: KindStep, Name: name, Text: publishedStep(t, name)}
		_, err := l.Evaluate(&Request{Check: &src})
		if want, ok := refused[name]; ok {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: want a refusal naming %s, got %v", name, want, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// An action that does not evaluate (a method outside its parameter's
// choices, a definition the package does not have) fails the step: it
// is never dropped while the step succeeds.
func TestStep_AnActionThatDoesNotEvaluateFailsTheStep(t *testing.T) {
	l := NewLocal(0)
	for name, tpl := range map[string]string{
		"bad method":     "import \"vela/http\"\nreq: http.#HTTPDo & {$params: {method: \"get\", url: \"http://127.0.0.1/\"}}\n",
		"no such action": "import \"vela/kube\"\ndel: kube.#Remove & {$params: value: {apiVersion: \"v1\", kind: \"ConfigMap\", metadata: name: \"x\"}}\n",
	} {
		_, err := l.Evaluate(&Request{Step: &StepInput{Source: Source{Kind: KindStep, Name: name, Text: tpl}, Params: json.RawMessage(`{}`), Context: json.RawMessage(`{}`)}})
		if err == nil {
			t.Errorf("%s: the step did not fail", name)
			continue
		}
		t.Logf("%s: %v", name, err)
	}
}

// The published apply-deployment waits while the Deployment it applied
// reports no ready replicas yet (its condition cannot be decided), as in
// KubeVela, instead of failing.
func TestStep_AWaitOnAFieldNotReportedYetWaits(t *testing.T) {
	r, ran := runStep(t, NewLocal(0), "apply-deployment", publishedStep(t, "apply-deployment"), `{"image":"nginx"}`, nil, func(a Action) any {
		return map[string]any{"value": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "s1", "namespace": "team"}, "spec": map[string]any{"replicas": 1}}}
	})
	if r.Control != StepWait || len(ran) != 1 {
		t.Fatalf("want a wait after the apply: %+v %+v", r, ran)
	}
}
