package render_test

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/render"
)

func policyDef(name, tmpl string) *v1beta1.PolicyDefinition {
	return &v1beta1.PolicyDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "vela-system", UID: types.UID("uid-p-" + name), ResourceVersion: "1"},
		Spec:       v1beta1.PolicyDefinitionSpec{Schematic: &v1beta1.Schematic{CUE: &v1beta1.CUE{Template: tmpl}}},
	}
}

// quotaPolicy renders a ResourceQuota from its properties, and a
// ConfigMap in outputs: a policy KubeVela delivers as the Application's
// resources.
const quotaPolicy = `
parameter: {cpu: string}
output: {
	apiVersion: "v1"
	kind:       "ResourceQuota"
	spec: hard: "limits.cpu": parameter.cpu
}
outputs: note: {
	apiVersion: "v1"
	kind:       "ConfigMap"
	data: {policy: context.name, app: context.appName}
}
`

// A policy whose PolicyDefinition renders output (and outputs) delivers
// those objects, as KubeVela does: in the Application's namespace, output
// named after the policy, labelled with the Application and the policy's
// name as the component. Native types (topology, garbage-collect, ...)
// and policies without output render nothing.
func TestRenderPolicies_OutputIsDelivered(t *testing.T) {
	a := app(t, map[string]any{"image": "nginx"})
	a.Spec.Policies = []v1beta1.AppPolicy{
		{Name: "quota", Type: "quota", Properties: props(t, map[string]any{"cpu": "2"})},
		{Name: "gc", Type: "garbage-collect", Properties: props(t, map[string]any{})},
		{Name: "quiet", Type: "quiet", Properties: props(t, map[string]any{})},
		{Name: "unknown", Type: "no-definition"},
	}
	d := defsWith()
	d.Policies = map[string]*v1beta1.PolicyDefinition{
		"quota": policyDef("quota", quotaPolicy),
		// A native type's template is never rendered, even if it has output.
		"garbage-collect": policyDef("garbage-collect", `output: {apiVersion: "v1", kind: "ConfigMap"}`),
		"quiet":           policyDef("quiet", `parameter: {}`),
	}
	objs, err := render.NewRenderer().RenderPolicies(a, d, render.AppContext{AppRevision: "shop-v1", AppRevisionNum: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 {
		t.Fatalf("want the quota policy's two objects, got %d: %+v", len(objs), objs)
	}
	q, note := objs[0], objs[1]
	if q.Policy != "quota" || q.Output != "" || q.Object.GetKind() != "ResourceQuota" || q.Object.GetName() != "quota" || q.Object.GetNamespace() != "prod" {
		t.Errorf("output: %s %s/%s from %q/%q", q.Object.GetKind(), q.Object.GetNamespace(), q.Object.GetName(), q.Policy, q.Output)
	}
	if got := toJSON(t, q.Object.Object["spec"]); got != `{"hard":{"limits.cpu":"2"}}` {
		t.Errorf("spec %s", got)
	}
	if note.Output != "note" || note.Object.GetName() != "quota-note" || toJSON(t, note.Object.Object["data"]) != `{"app":"shop","policy":"quota"}` {
		t.Errorf("outputs.note: %s %+v", note.Object.GetName(), note.Object.Object["data"])
	}
	for k, v := range map[string]string{v1beta1.LabelAppName: "shop", v1beta1.LabelAppNamespace: "prod",
		v1beta1.LabelAppComponent: "quota", v1beta1.LabelAppRevision: "shop-v1"} {
		if got := q.Object.GetLabels()[k]; got != v {
			t.Errorf("label %s = %q, want %q", k, got, v)
		}
	}

	// The Application's components are not rendered by it, nor the
	// policies by Render.
	res := mustRender(t, a, d)
	if len(res.Components) != 1 {
		t.Fatalf("components %d", len(res.Components))
	}
}

// A policy template that fails names the policy; nothing is returned.
func TestRenderPolicies_ErrorNamesThePolicy(t *testing.T) {
	a := app(t, map[string]any{"image": "nginx"})
	a.Spec.Policies = []v1beta1.AppPolicy{{Name: "limits", Type: "quota", Properties: props(t, map[string]any{"cpu": 2})}}
	d := defsWith()
	d.Policies = map[string]*v1beta1.PolicyDefinition{"quota": policyDef("quota", quotaPolicy)}
	objs, err := render.NewRenderer().RenderPolicies(a, d, render.AppContext{}, nil)
	var rerr *render.Error
	if !errors.As(err, &rerr) || rerr.Policy != "limits" || rerr.Reason != v1beta1.ReasonInvalidProperties || objs != nil {
		t.Fatalf("want an InvalidProperties error naming policy limits, got %v (%+v)", err, objs)
	}
	if !strings.HasPrefix(err.Error(), `policy "limits": properties do not fit parameter`) {
		t.Errorf("message %q", err.Error())
	}
}

// A copy of a component a replication policy selects sees its key as
// context.replicaKey and labels what it renders with it, as KubeVela's do;
// other components keep replicaKey "" and no label.
func TestRender_ReplicaKeyInContextAndLabel(t *testing.T) {
	d := render.Definitions{Components: map[string]*v1beta1.ComponentDefinition{"cm": componentDef("cm", `
output: {
	apiVersion: "v1"
	kind:       "ConfigMap"
	metadata: name: "\(context.name)-\(context.replicaKey)"
	data: key: context.replicaKey
}`)}}
	a := app(t, map[string]any{})
	a.Spec.Components[0].Type = "cm"
	eu, us := a.Spec.Components[0], a.Spec.Components[0]
	eu.ReplicaKey, us.ReplicaKey = "eu", "us"
	a.Spec.Components = append(a.Spec.Components, eu, us)
	res := mustRender(t, a, d)
	for i, want := range []string{"", "eu", "us"} {
		w := res.Components[i].Workload
		if w.GetName() != "web-"+want || toJSON(t, w.Object["data"]) != `{"key":"`+want+`"}` || res.Components[i].ReplicaKey != want {
			t.Errorf("copy %q: %s %v", want, w.GetName(), w.Object["data"])
		}
		if got, ok := w.GetLabels()[render.LabelReplicaKey]; got != want || ok != (want != "") {
			t.Errorf("copy %q: label %q", want, got)
		}
	}
}
