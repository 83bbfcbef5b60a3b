package admission

import (
	"slices"
	"testing"
)

// KubeVela's required rule, read from the template's syntax: neither
// optional nor defaulted, structs walked into; what only evaluation could
// tell is not counted.
func TestRequiredParams_KubeVelasRule(t *testing.T) {
	for _, tc := range []struct {
		name, tmpl string
		want       []string
	}{
		{"leaves and nesting", `parameter: {image: string, a: b: c: int & >0, port?: int, cpu: *"1" | string}`, []string{"image", "a.b.c"}},
		{"a definition of the template", "#P: {x: string, y?: int}\nparameter: #P", []string{"x"}},
		{"a struct field typed by a definition", "#Port: {port: int}\nparameter: {ports: #Port}", []string{"ports.port"}},
		{"lists, required marks and concrete values", `parameter: {objects: [...{...}], name!: string, fixed: "x", any: _}`, []string{"objects", "name"}},
		{"maps and comprehensions", `parameter: {labels: [string]: string, if true {x: string}}`, nil},
		{"a reference from outside", `parameter: {ctx: context.name}`, nil},
		{"no parameter, or one that does not parse", `output: {}`, nil},
		{"does not parse", `parameter: {`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := requiredParams(tc.tmpl); !slices.Equal(got, tc.want) {
				t.Fatalf("required %v, want %v", got, tc.want)
			}
		})
	}
}

// The kinds a template outputs are read where KubeVela reads them: literal
// apiVersion and kind of output and of each entry of outputs.
func TestOutputKinds_LiteralOnes(t *testing.T) {
	got := outputKinds(`
output: {apiVersion: "apps/v1", kind: "Deployment"}
outputs: {
	svc: {apiVersion: "v1", kind: "Service"}
	hpa: {
		if context.clusterVersion.minor < 23 {apiVersion: "autoscaling/v2beta2"}
		kind: "HorizontalPodAutoscaler"
	}
	"my-ingress": {apiVersion: "networking.k8s.io/v1", kind: "Ingress"}
}
`)
	want := []outputKind{
		{Where: "output", APIVersion: "apps/v1", Kind: "Deployment"},
		{Where: "outputs.svc", APIVersion: "v1", Kind: "Service"},
		{Where: "outputs.my-ingress", APIVersion: "networking.k8s.io/v1", Kind: "Ingress"},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}
