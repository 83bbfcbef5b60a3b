package cueeval

import (
	"errors"
	"strings"
	"testing"
)

const tmpl = `parameter: {name: string}
output: {apiVersion: "v1", kind: "ConfigMap", metadata: name: parameter.name, data: app: context.name}`

func renderReq(text string) *Request {
	return &Request{Render: &TemplateInput{
		Source:  Source{Kind: KindComponent, Namespace: "ns", Name: "cm", Version: "uid/1/abc", Text: text},
		Context: []byte(`{"name":"web"}`), Params: []byte(`{"name":"x"}`),
	}}
}

// TestLocal_AsksForATextItHasNotCompiled: a request may leave out the text
// of a source the evaluator compiled before (its version names it); one it
// has not compiled is asked for, never evaluated as empty.
func TestLocal_AsksForATextItHasNotCompiled(t *testing.T) {
	l := NewLocal(0)
	omitted := func() *Request {
		r := renderReq("")
		r.Render.Source.Omitted = true
		return r
	}
	res, err := l.Evaluate(omitted())
	if err != nil || !res.NeedSource {
		t.Fatalf("got %+v, %v: want the text asked for", res, err)
	}
	if res, err = l.Evaluate(renderReq(tmpl)); err != nil || res.Render.Output == nil || res.Cache[0].Hit {
		t.Fatalf("with the text: %+v, %v", res, err)
	}
	res, err = l.Evaluate(omitted())
	if err != nil || res.NeedSource || !strings.Contains(string(res.Render.Output), `"app":"web"`) || !res.Cache[0].Hit {
		t.Fatalf("without the text, once compiled: %+v, %v", res, err)
	}
	// Another version of it is another source.
	other := omitted()
	other.Render.Source.Version = "uid/2/def"
	if res, _ := l.Evaluate(other); !res.NeedSource {
		t.Fatal("a new version was evaluated from the old one's compilation")
	}
}

func TestLocal_Expressions(t *testing.T) {
	l := NewLocal(0)
	res, err := l.Evaluate(&Request{Bools: &Expressions{
		Exprs: []string{`status.a.phase == "succeeded"`, `status.b.phase == "x"`, `1`},
		Scope: []byte(`{"status":{"a":{"phase":"succeeded"}}}`),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Results; !r[0].Bool || r[0].Err != "" || !strings.Contains(r[1].Err, "undefined field") || !strings.Contains(r[2].Err, "bool") {
		t.Fatalf("results %+v", r)
	}
	res, err = l.Evaluate(&Request{Values: &Expressions{
		Exprs: []string{`"http://\(output.ip)"`, `output.missing`},
		Scope: []byte(`{"output":{"ip":"10.0.0.1"}}`),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Results; string(r[0].Value) != `"http://10.0.0.1"` || r[1].Err == "" {
		t.Fatalf("results %+v", r)
	}
}

func TestLocal_AProblemOfTheTemplateIsAnError(t *testing.T) {
	_, err := NewLocal(0).Evaluate(renderReq(`parameter: {name: int}
output: {apiVersion: "v1", kind: "ConfigMap"}`))
	var ee *Error
	if !errors.As(err, &ee) || ee.Reason != "InvalidProperties" || ee.Path != "name" {
		t.Fatalf("got %#v", err)
	}
	_, err = NewLocal(0).Evaluate(renderReq(`output: {`))
	if !errors.As(err, &ee) || ee.Reason != "RenderFailed" || !strings.Contains(ee.Message, "does not compile") {
		t.Fatalf("got %#v", err)
	}
}

// TestLocal_AnEmptyTemplateRendersNothing: a definition may have an empty
// template (KubeVela renders nothing for it); it is not a text left out.
func TestLocal_AnEmptyTemplateRendersNothing(t *testing.T) {
	res, err := NewLocal(0).Evaluate(renderReq(""))
	if err != nil || res.NeedSource || res.Render == nil || res.Render.Output != nil {
		t.Fatalf("got %+v, %v", res, err)
	}
}
