package provider

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
)

func TestUtilString_DecodesCUEBytes(t *testing.T) {
	// CUE's base64.Decode yields bytes, which reach us as base64 in JSON.
	out, err := Util().Do(context.Background(), testEnv(t), Call{Provider: "util", Do: "string", Params: json.RawMessage(`{"bt":"ZGIuZXhhbXBsZS5jb20="}`)})
	if err != nil || string(out) != `{"str":"db.example.com"}` {
		t.Fatalf("returns %s, %v", out, err)
	}
	if _, err := Util().Do(context.Background(), testEnv(t), Call{Provider: "util", Do: "string", Params: json.RawMessage(`{"bt":"not base64!"}`)}); err == nil {
		t.Fatal("want an error for bytes that are not base64")
	}
}

func TestUtilLog_WritesDataAtV1WithStep(t *testing.T) {
	var lines []string
	env := testEnv(t)
	env.Log = funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: 1})
	for _, params := range []string{`{"data":"image built","level":3}`, `{"data":{"replicas":2},"level":3}`} {
		out, err := Util().Do(context.Background(), env, Call{Provider: "util", Do: "log", Params: json.RawMessage(params)})
		if err != nil || out != nil {
			t.Fatalf("%s: returns %s, %v", params, out, err)
		}
	}
	if len(lines) != 2 || !strings.Contains(lines[0], `"msg"="image built"`) || !strings.Contains(lines[0], `"step"="step"`) ||
		!strings.Contains(lines[1], `{\"replicas\":2}`) {
		t.Fatalf("log lines %q", lines)
	}
	lines = nil
	env.Log = funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: 0})
	_, _ = Util().Do(context.Background(), env, Call{Provider: "util", Do: "log", Params: json.RawMessage(`{"data":"quiet"}`)})
	if len(lines) != 0 {
		t.Fatalf("logged at verbosity 0: %q", lines)
	}
}

func TestUtilPatchK8sObject_Unsupported(t *testing.T) {
	_, err := Defaults(HTTPOptions{}).Do(context.Background(), testEnv(t), Call{Provider: "util", Do: "patch-k8s-object", Params: json.RawMessage(`{}`)})
	var u *UnsupportedError
	if err == nil || !asUnsupported(err, &u) {
		t.Fatalf("want UnsupportedError, got %v", err)
	}
}
