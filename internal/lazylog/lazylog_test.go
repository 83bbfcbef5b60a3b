package lazylog

import (
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// lines records what a funcr logger writes, with the caller.
func lines(verbosity int) (logr.Logger, *[]string) {
	var out []string
	l := funcr.New(func(prefix, args string) { out = append(out, prefix+" "+args) },
		funcr.Options{Verbosity: verbosity, LogCaller: funcr.All})
	return l, &out
}

// A line written through the wrapped logger carries every value, in the
// order it was given, the logger's name and the caller's file; values
// added to a derived logger stay out of its parent.
func TestWrap_LinesCarryTheValuesInOrder(t *testing.T) {
	base, out := lines(1)
	l := Wrap(base.WithValues("controller", "application")).WithName("app")
	req := l.WithValues("namespace", "default", "name", "web")
	req.WithValues("reconcileID", "42").V(1).Info("Created", "object", "Deployment default/web")
	req.Error(nil, "failed", "reason", "x")
	l.Info("plain")
	if len(*out) != 3 {
		t.Fatalf("lines: %q", *out)
	}
	for i, want := range []string{
		`app "caller"={"file"="lazylog_test.go"`,
		`"controller"="application" "namespace"="default" "name"="web" "reconcileID"="42" "object"="Deployment default/web"`,
	} {
		if !strings.Contains((*out)[0], want) {
			t.Errorf("line %q lacks %d: %s", (*out)[0], i, want)
		}
	}
	if !strings.Contains((*out)[1], `"name"="web" "reason"="x"`) || strings.Contains((*out)[1], "reconcileID") {
		t.Errorf("error line %q: want the request's values, not its child's", (*out)[1])
	}
	if strings.Contains((*out)[2], `"name"=`) {
		t.Errorf("line %q carries a child logger's values", (*out)[2])
	}
}

// Below the verbosity nothing is written, and Enabled says so, as the
// sink below does.
func TestWrap_DisabledLevelsWriteNothing(t *testing.T) {
	base, out := lines(0)
	l := Wrap(base).WithValues("name", "web")
	if l.V(1).Enabled() {
		t.Error("V(1) enabled at verbosity 0")
	}
	l.V(1).Info("Unchanged")
	if len(*out) != 0 {
		t.Errorf("wrote %q", *out)
	}
}

// The request logger has controller-runtime's values: the controller, its
// kind, and per request the object, namespace and name.
func TestRequestLogger_HasControllerRuntimesValues(t *testing.T) {
	base, out := lines(0)
	gvk := schema.GroupVersionKind{Group: "core.oam.dev", Version: "v1beta1", Kind: "Application"}
	newLog := RequestLogger(base, "application", gvk)
	req := reconcile.Request{}
	req.Namespace, req.Name = "default", "web"
	newLog(&req).Info("Reconciled")
	newLog(nil).Info("Starting")
	want := `"controller"="application" "controllerGroup"="core.oam.dev" "controllerKind"="Application" "Application"={"name"="web" "namespace"="default"} "namespace"="default" "name"="web"`
	if !strings.Contains((*out)[0], want) {
		t.Errorf("request line %q lacks %s", (*out)[0], want)
	}
	if strings.Contains((*out)[1], `"name"=`) {
		t.Errorf("a line without a request carries one: %q", (*out)[1])
	}
}
