package render_test

import (
	"testing"

	"github.com/steward-oam/steward/api/v1beta1"
)

func TestPatch_Strategies(t *testing.T) {
	tests := []struct {
		name  string
		patch string
		props any
		// path into the workload spec and the JSON it must hold.
		want    string
		wantErr string
	}{{
		name:  "default merge adds fields",
		patch: `patch: spec: minReadySeconds: 5`,
		want:  `{"minReadySeconds":5,"replicas":2,"template":{"spec":{"containers":[{"env":[{"name":"A","value":"1"}],"image":"nginx","name":"web"}]}}}`,
	}, {
		name:    "default merge refuses to change a value",
		patch:   `patch: spec: replicas: 3`,
		wantErr: `spec.replicas: conflicting values 2 and 3`,
	}, {
		name: "retainKeys replaces a value",
		patch: `patch: spec: {
	// +patchStrategy=retainKeys
	replicas: 3
}`,
		want: `{"replicas":3,"template":{"spec":{"containers":[{"env":[{"name":"A","value":"1"}],"image":"nginx","name":"web"}]}}}`,
	}, {
		name: "patchKey merges list elements by key and appends new ones",
		patch: `patch: spec: template: spec: {
	// +patchKey=name
	containers: [{name: "side", image: "busybox"}, {name: "web", imagePullPolicy: "Always"}]
}`,
		want: `{"replicas":2,"template":{"spec":{"containers":[{"env":[{"name":"A","value":"1"}],"image":"nginx","imagePullPolicy":"Always","name":"web"},{"image":"busybox","name":"side"}]}}}`,
	}, {
		name: "patchKey applies to nested lists of merged elements",
		patch: `patch: spec: template: spec: {
	// +patchKey=name
	containers: [{name: "web", env: [{name: "B", value: "2"}]}]
}`,
		want: `{"replicas":2,"template":{"spec":{"containers":[{"env":[{"name":"A","value":"1"},{"name":"B","value":"2"}],"image":"nginx","name":"web"}]}}}`,
	}, {
		name: "replace swaps a whole list",
		patch: `patch: spec: template: spec: {
	// +patchKey=name
	containers: [{
		name: "web"
		// +patchStrategy=replace
		env: [{name: "C", value: "3"}]
	}]
}`,
		want: `{"replicas":2,"template":{"spec":{"containers":[{"env":[{"name":"C","value":"3"}],"image":"nginx","name":"web"}]}}}`,
	}, {
		name:  "open list pattern applies to every element",
		patch: `patch: spec: template: spec: containers: [...{stdin: true}]`,
		want:  `{"replicas":2,"template":{"spec":{"containers":[{"env":[{"name":"A","value":"1"}],"image":"nginx","name":"web","stdin":true}]}}}`,
	}, {
		name: "jsonMergePatch deletes with null",
		patch: `// +patchStrategy=jsonMergePatch
patch: {spec: {replicas: null, paused: true}}`,
		want: `{"paused":true,"template":{"spec":{"containers":[{"env":[{"name":"A","value":"1"}],"image":"nginx","name":"web"}]}}}`,
	}, {
		name: "jsonPatch runs operations",
		patch: `// +patchStrategy=jsonPatch
patch: {operations: [{op: "replace", path: "/spec/replicas", value: 7}, {op: "remove", path: "/spec/template"}]}`,
		want: `{"replicas":7}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := defsWith(traitDef("p", tt.patch, ""))
			a := app(t, map[string]any{"image": "nginx", "replicas": 2}, trait(t, "p", map[string]any{}))
			res, err := renderApp(a, d)
			if tt.wantErr != "" {
				if err == nil || !contains(err.Error(), tt.wantErr) {
					t.Fatalf("want error containing %q, got %v", tt.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := toJSON(t, res.Components[0].Workload.Object["spec"]); got != tt.want {
				t.Errorf("spec\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestPatch_PatchOutputsChangeTraitObjects(t *testing.T) {
	svc := traitDef("svc", `outputs: service: {apiVersion: "v1", kind: "Service", spec: type: "ClusterIP"}`, "")
	lb := traitDef("lb", `patchOutputs: service: spec: {
	// +patchStrategy=retainKeys
	type: "LoadBalancer"
}`, "")
	a := app(t, map[string]any{"image": "nginx"}, trait(t, "svc", nil), trait(t, "lb", nil))
	res := mustRender(t, a, defsWith(svc, lb))
	aux := res.Components[0].Auxiliaries
	if len(aux) != 1 || aux[0].Object.Object["spec"].(map[string]any)["type"] != "LoadBalancer" {
		t.Fatalf("want the service patched to LoadBalancer, got %+v", aux)
	}
	if aux[0].Object.GetName() != "web-service" {
		t.Errorf("unnamed output: want name web-service, got %q", aux[0].Object.GetName())
	}
}

func TestTraits_AppliedInStageOrder(t *testing.T) {
	// Each trait appends its name to an annotation it reads from context.output.
	tmpl := func(name string) string {
		return `_prev: *"" | string
if context.output.metadata.annotations.order != _|_ {
	_prev: context.output.metadata.annotations.order
}
// +patchStrategy=jsonMergePatch
patch: {metadata: annotations: order: _prev + "` + name + `"}`
	}
	d := defsWith(traitDef("post", tmpl("post,"), v1beta1.TraitStagePostDispatch),
		traitDef("pre", tmpl("pre,"), v1beta1.TraitStagePreDispatch),
		traitDef("a", tmpl("a,"), ""), traitDef("b", tmpl("b,"), v1beta1.TraitStageDefault))
	a := app(t, map[string]any{"image": "nginx"},
		trait(t, "post", nil), trait(t, "b", nil), trait(t, "pre", nil), trait(t, "a", nil))
	res := mustRender(t, a, d)
	if got := res.Components[0].Workload.GetAnnotations()["order"]; got != "pre,b,a,post," {
		t.Errorf("want traits in order pre,b,a,post, got %s", got)
	}
}
