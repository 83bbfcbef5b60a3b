package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
)

// The hostile tenant (issue 46): Applications of the tenant's namespace
// that try, through workflow step providers, what rendered objects may
// not. They live beside the model's Applications for the whole run,
// through controller kills and API server restarts, and the invariants
// hold against them: nothing foreign is deleted or modified, and the
// model's Applications settle as if they were not there.
//
//   - hostileConfig runs KubeVela's delete-config on a config Secret the
//     tenant wrote by hand, whose objects-reference lists the suite's
//     foreign objects (a ConfigMap of nobody, a Deployment of nobody):
//     refused, since none was made for the config, and nothing deleted.
//   - hostileSSRF asks http.do for the API server's own loopback address:
//     refused by the egress policy, without a connection.
//   - hostileBig asks a server (the suite's, on 127.0.0.2, which the
//     controller runs allowed with --egress-allow=127.0.0.2/32) for 4 MiB
//     of "<", 24 MiB as JSON: refused past --max-step-action-result-size.
//   - hostileTarpit asks the same server for an answer that never comes
//     (up to the request's 59 s timeout, again and again): it holds its
//     own step, never a reconcile worker, so the model's Applications
//     settle in their quiet periods as before.
const (
	hostileConfig    = "hostile-config"
	hostileSSRF      = "hostile-ssrf"
	hostileBig       = "hostile-big"
	hostileTarpit    = "hostile-tarpit"
	hostileAllow     = "127.0.0.2/32"
	hostileSecret    = "hostile-config-secret"
	hostileDeleteDef = "chaos-delete-config"
	hostileGetDef    = "chaos-get"
)

// hostileServer is the tenant's server: /big answers 4 MiB of "<",
// /tarpit answers only when stop is called (or the request gives up). It
// listens on 127.0.0.2, the one loopback address the controller is
// allowed to reach.
func hostileServer() (url string, stop func(), err error) {
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		return "", nil, fmt.Errorf("listening on 127.0.0.2 (Linux routes 127.0.0.0/8 to loopback): %w", err)
	}
	body := strings.Repeat("<", 4<<20)
	done := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			_, _ = io.WriteString(w, body)
		case "/tarpit":
			select {
			case <-done:
			case <-r.Context().Done():
			}
		default:
			http.NotFound(w, r)
		}
	}))
	srv.Listener = l
	srv.Start()
	return srv.URL, func() { close(done); srv.Close() }, nil
}

// installHostile writes the tenant's step definitions, its hand-made
// config Secret and its Applications; apiServer is the API server's URL,
// srv the tenant's server.
func installHostile(ctx context.Context, c client.Client, apiServer, srv string) error {
	defs := map[string]string{
		hostileDeleteDef: `import "vela/config"
deploy: config.#DeleteConfig & {$params: parameter}
parameter: {
	name:      string
	namespace: *context.namespace | string
}
`,
		hostileGetDef: `import "vela/http"
req: http.#HTTPDo & {$params: {method: "GET", url: parameter.url, request: timeout: parameter.timeout}}
parameter: {
	url:     string
	timeout: *"3s" | string
}
`,
	}
	for name, tmpl := range defs {
		def := &v1beta1.WorkflowStepDefinition{}
		def.Name, def.Namespace = name, chaosNS
		def.Spec.Schematic = &v1beta1.Schematic{CUE: &v1beta1.CUE{Template: tmpl}}
		if err := c.Create(ctx, def); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	refs, _ := json.Marshal([]corev1.ObjectReference{
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: chaosNS, Name: "foreign-nobody"},
		{APIVersion: "apps/v1", Kind: "Deployment", Namespace: chaosNS, Name: "foreign-web"},
	})
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: hostileSecret, Namespace: chaosNS,
		Labels: map[string]string{"config.oam.dev/catalog": "velacore-config", "config.oam.dev/type": ""}},
		Data: map[string][]byte{"input-properties": []byte(`{}`), "objects-reference": refs}}
	if err := c.Create(ctx, sec); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	for name, step := range map[string]map[string]any{
		hostileConfig: {"name": "delete", "type": hostileDeleteDef, "properties": map[string]any{"name": hostileSecret}},
		hostileSSRF:   {"name": "get", "type": hostileGetDef, "properties": map[string]any{"url": apiServer + "/api/v1/namespaces/kube-system/secrets"}},
		hostileBig:    {"name": "get", "type": hostileGetDef, "properties": map[string]any{"url": srv + "/big"}},
		hostileTarpit: {"name": "get", "type": hostileGetDef, "properties": map[string]any{"url": srv + "/tarpit", "timeout": "59s"}},
	} {
		spec := map[string]any{
			"components": []any{map[string]any{"name": "own", "type": "k8s-objects", "properties": map[string]any{"objects": []any{
				map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": name + "-own"}, "stringData": map[string]any{"v": "x"}},
			}}}},
			"workflow": map[string]any{"steps": []any{
				map[string]any{"name": "apply", "type": "apply-component", "properties": map[string]any{"component": "own"}},
				step,
			}},
		}
		raw, err := json.Marshal(spec)
		if err != nil {
			return err
		}
		app := &v1beta1.Application{}
		app.Name, app.Namespace = name, chaosNS
		if err := json.Unmarshal(raw, &app.Spec); err != nil {
			return err
		}
		if err := c.Create(ctx, app); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}

// hostileInvariants: the hand-made config is still there (config.delete
// deleted nothing), and each hostile step, once it ran, failed with the
// reason of the check that stopped it; with ran, each must have run.
func (h *harness) hostileInvariants(ctx context.Context, ran bool) []violation {
	var out []violation
	add := func(kind, subject, format string, args ...any) {
		out = append(out, violation{Kind: kind, Subject: subject, Detail: fmt.Sprintf(format, args...)})
	}
	var sec corev1.Secret
	if err := h.c.Get(ctx, client.ObjectKey{Namespace: chaosNS, Name: hostileSecret}, &sec); err != nil {
		add(kindForeign, "Secret "+chaosNS+"/"+hostileSecret, "the tenant's hand-made config: %v", err)
	}
	var tarpit v1beta1.Application
	if err := h.c.Get(ctx, client.ObjectKey{Namespace: chaosNS, Name: hostileTarpit}, &tarpit); err == nil && tarpit.Status.Workflow != nil {
		for _, s := range tarpit.Status.Workflow.Steps {
			if s.Name == "get" && s.Phase == v1beta1.WorkflowStepSucceeded {
				add(kindForeign, "app "+hostileTarpit, "step get succeeded: the tarpit never answers")
			}
		}
	}
	for name, want := range map[string]struct{ step, reason string }{
		hostileConfig: {"delete", "Refused"},
		hostileSSRF:   {"get", "EgressDenied"},
		hostileBig:    {"get", "ResultTooLarge"},
	} {
		var app v1beta1.Application
		if err := h.c.Get(ctx, client.ObjectKey{Namespace: chaosNS, Name: name}, &app); err != nil {
			add(kindNotSettled, "app "+name, "reading it: %v", err)
			continue
		}
		var steps []v1beta1.WorkflowStepStatus
		if app.Status.Workflow != nil {
			steps = app.Status.Workflow.Steps
		}
		done := false
		for _, s := range steps {
			if s.Name != want.step || s.Phase == v1beta1.WorkflowStepPending || s.Phase == v1beta1.WorkflowStepRunning {
				continue
			}
			done = true
			if s.Phase != v1beta1.WorkflowStepFailed || s.Reason != want.reason {
				add(kindForeign, "app "+name, "step %s: %s %s (%s), want failed %s", s.Name, s.Phase, s.Reason, s.Message, want.reason)
			}
		}
		if ran && !done {
			add(kindNotSettled, "app "+name, "step %s never ran to its refusal (steps %+v)", want.step, steps)
		}
	}
	return out
}
