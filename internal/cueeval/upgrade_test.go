package cueeval

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"cuelang.org/go/cue/format"
	"cuelang.org/go/cue/parser"
)

// upgraded parses src, upgrades it and returns it formatted.
func upgraded(t *testing.T, src string) (string, bool) {
	t.Helper()
	f, err := parser.ParseFile("t", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	changed := upgradeSyntax(f)
	b, err := format.Node(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), changed
}

// TestUpgradeSyntax_RewritesWhatKubeVelaRewrites: the cases of KubeVela's
// own upgrade tests (pkg/cue/upgrade), with the text each becomes.
func TestUpgradeSyntax_RewritesWhatKubeVelaRewrites(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string // in the result
		not       []string // not in the result
	}{
		{name: "list addition", src: "a: [1, 2]\nb: [3]\nc: a + b\n",
			want: []string{`import "list"`, "c: list.Concat([a, b])"}},
		{name: "fields declared after use, in a struct", src: "o: {\n\titems: base + extra\n\tbase: [\"a\"]\n\textra: [\"b\"]\n}\n",
			want: []string{"items: list.Concat([base, extra])"}},
		{name: "numbers add as before", src: "n: 5\nm: 10\ns: n + m\nx: \"a\" + \"b\"\n",
			want: []string{"s: n + m", `x: "a" + "b"`}, not: []string{"list"}},
		{name: "list times a count", src: "l: [\"a\"]\nr: l * 3\nq: 2 * l\n",
			want: []string{"r: list.Repeat(l, 3)", "q: list.Repeat(l, 2)"}},
		{name: "a literal list times a name", src: "n: 2\nr: [0] * n\n",
			want: []string{"r: list.Repeat([0], n)"}},
		{name: "a chain is one call", src: "m: {\n\tpvc: [1]\n\tcm: [2]\n\tsecret: [3]\n}\nv: m.pvc + m.cm + m.secret\n",
			want: []string{"v: list.Concat([m.pvc, m.cm, m.secret])"}, not: []string{"Concat([list.Concat"}},
		{name: "a partly upgraded chain stays flat", src: "import \"list\"\nm: {\n\tpvc: [1]\n\tcm: [2]\n\tsecret: [3]\n}\nv: list.Concat([m.pvc, m.cm]) + m.secret\n",
			want: []string{"v: list.Concat([m.pvc, m.cm, m.secret])"}},
		{name: "open list parameter with a default", src: "env: parameter.env + [{name: \"A\", value: \"1\"}]\nparameter: {\n\tenv: *[] | [...{name: string, value?: string}]\n}\n",
			want: []string{`list.Concat([parameter.env, [{name: "A", value: "1"}]])`}},
		{name: "a field computed from lists is a list", src: "a: [1]\nb: [2]\nc: a + b\nd: c * 2\n",
			want: []string{"d: list.Repeat(c, 2)"}},
		{name: "an existing list import is reused", src: "import (\n\t\"strings\"\n\t\"list\"\n)\na: [1]\nb: a + [2]\n",
			want: []string{"b: list.Concat([a, [2]])"}},
		// Beyond KubeVela's guesses: a list literal makes + and * list
		// arithmetic (since CUE v0.11 they are an error otherwise), and
		// qualified names of any depth are looked up.
		{name: "a literal list plus anything", src: "x: y + [1]\nz: [0] + context.output.spec.args\n",
			want: []string{"x: list.Concat([y, [1]])", "z: list.Concat([[0], context.output.spec.args])"}},
		{name: "a literal list times any count", src: "r: [\"-v\"] * parameter.verbosity\nparameter: verbosity: int\n",
			want: []string{`r: list.Repeat(["-v"], parameter.verbosity)`}},
		{name: "deeper qualified names", src: "parameter: a: {b: [...int], c: [...int]}\nx: parameter.a.b + parameter.a.c\n",
			want: []string{"x: list.Concat([parameter.a.b, parameter.a.c])"}},
		{name: "repeat inside a chain", src: "parameter: a: [...int]\nx: parameter.a + [0] * 2\n",
			want: []string{"x: list.Concat([parameter.a, list.Repeat([0], 2)])"}},
		{name: "unknown names and scalars are left alone", src: "x: a + b\ny: \"-\" * 3\nz: \"p\" + [1]\nn: a * b\n",
			want: []string{"x: a + b", `y: "-" * 3`, `z: "p" + [1]`, "n: a * b"}, not: []string{"list."}},
		{name: "error label quoted when the builtin is called", src: "out: {\n\terror: \"bad\"\n\tx: error(\"boom\")\n}\n",
			want: []string{`"error": "bad"`}},
		{name: "error label left alone otherwise", src: "out: {\n\terror: \"bad\"\n\tmsg: error\n}\n",
			want: []string{"\terror: \"bad\""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := upgraded(t, tt.src)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("want %q in\n%s", w, got)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(got, n) {
					t.Errorf("want no %q in\n%s", n, got)
				}
			}
			if strings.Contains(got, "list.") && strings.Count(got, `"list"`) != 1 {
				t.Errorf("want exactly one list import in\n%s", got)
			}
		})
	}
}

// TestUpgradeSyntax_LeavesModernCUEAlone: a template already written for
// CUE v0.11+ compiles as it is.
func TestUpgradeSyntax_LeavesModernCUEAlone(t *testing.T) {
	for _, src := range []string{
		"import \"list\"\na: [1]\nb: list.Concat([a, [2]])\n",
		"n: 1\nm: n + 2\ns: \"a\" + \"b\"\np: n * 3\n",
		"parameter: {ports: [...int]}\nout: [for p in parameter.ports {p + 1}]\n",
	} {
		if got, changed := upgraded(t, src); changed {
			t.Errorf("changed %q into\n%s", src, got)
		}
	}
}

// TestLocal_RendersListArithmetic: a template adding and repeating lists,
// as written for KubeVela before CUE v0.11, renders what KubeVela renders,
// with positions of errors elsewhere still those of the text as written.
func TestLocal_RendersListArithmetic(t *testing.T) {
	src := `parameter: {
	env: *[] | [...{name: string, value: string}]
	args: [...string]
}
_base: [{name: "APP", value: context.name}]
output: {
	apiVersion: "v1"
	kind: "Pod"
	spec: containers: [{
		name: "main"
		env: _base + parameter.env + [{name: "LAST", value: "1"}]
		args: parameter.args * 2
		command: ["sh"] + ["-c"]
	}]
}`
	res, err := NewLocal(0).Evaluate(&Request{Render: &TemplateInput{
		Source:  Source{Kind: KindComponent, Name: "pod", Text: src},
		Context: []byte(`{"name":"web"}`),
		Params:  []byte(`{"env":[{"name":"X","value":"x"}],"args":["a"]}`),
	}})
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Spec struct {
			Containers []struct {
				Env     []map[string]string `json:"env"`
				Args    []string            `json:"args"`
				Command []string            `json:"command"`
			} `json:"containers"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(res.Render.Output, &out); err != nil {
		t.Fatal(err)
	}
	c := out.Spec.Containers[0]
	wantEnv := []map[string]string{{"name": "APP", "value": "web"}, {"name": "X", "value": "x"}, {"name": "LAST", "value": "1"}}
	if !reflect.DeepEqual(c.Env, wantEnv) || !reflect.DeepEqual(c.Args, []string{"a", "a"}) || !reflect.DeepEqual(c.Command, []string{"sh", "-c"}) {
		t.Fatalf("rendered %s", res.Render.Output)
	}

	// A real error keeps the line the author wrote it on.
	_, err = NewLocal(0).Evaluate(&Request{Check: &Source{Kind: KindComponent, Name: "bad",
		Text: "a: [1]\nb: a + [2]\n\nc: {x: 1} & {x: 2}\n"}})
	if err == nil || !strings.Contains(err.Error(), "line 4") {
		t.Fatalf("got %v, want the conflict reported at line 4", err)
	}
}

// TestLocal_StatusPartsAreUpgradedToo: healthPolicy, customStatus and
// details go through the same rewrite as templates, as in KubeVela.
func TestLocal_StatusPartsAreUpgradedToo(t *testing.T) {
	part := func(p, text string) *Source {
		return &Source{Kind: KindComponent, Name: "s", Part: p, Text: text}
	}
	res, err := NewLocal(0).Evaluate(&Request{Status: &StatusInput{
		HealthPolicy: part(PartHealthPolicy, "_ok: [\"Ready\"] + [\"Done\"]\nisHealth: len(_ok) == 2\n"),
		CustomStatus: part(PartCustomStatus, "_l: [\"a\"] * 2\nmessage: \"\\(len(_l)) items\"\n"),
		Details:      part(PartDetails, "_x: [1] + [2]\ncount: len(_x)\n"),
		Context:      []byte(`{}`), Params: []byte(`{}`),
	}})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Status
	if !s.Healthy || s.Message != "2 items" || s.Details["count"] != "2" || s.HealthErr+s.MessageErr+s.DetailsErr != "" {
		t.Fatalf("got %+v", s)
	}
}

// TestLocal_ErrorBuiltinNextToAnErrorField: a struct with a field named
// error may still call CUE's error builtin.
func TestLocal_ErrorBuiltinNextToAnErrorField(t *testing.T) {
	src := "parameter: {fail: bool}\noutput: {\n\terror: \"none\"\n\tif parameter.fail {\n\t\tdata: error(\"failing on purpose\")\n\t}\n}\n"
	req := func(fail string) *Request {
		return &Request{Render: &TemplateInput{Source: Source{Kind: KindComponent, Name: "e", Text: src},
			Context: []byte(`{}`), Params: []byte(`{"fail":` + fail + `}`)}}
	}
	res, err := NewLocal(0).Evaluate(req("false"))
	if err != nil || string(res.Render.Output) != `{"error":"none"}` {
		t.Fatalf("got %+v, %v", res, err)
	}
	if _, err := NewLocal(0).Evaluate(req("true")); err == nil || !strings.Contains(err.Error(), "failing on purpose") {
		t.Fatalf("got %v, want the builtin's message", err)
	}
}
