package placement

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/steward-oam/steward/api/v1beta1"
)

var registry = []Cluster{
	{Name: v1beta1.ClusterLocal, Labels: map[string]string{}},
	{Name: "eu-1", Labels: map[string]string{"region": "eu", "env": "prod"}},
	{Name: "eu-2", Labels: map[string]string{"region": "eu", "env": "staging"}},
	{Name: "us-1", Labels: map[string]string{"region": "us", "env": "prod"}},
}

func raw(s string) *runtime.RawExtension {
	if s == "" {
		return nil
	}
	return &runtime.RawExtension{Raw: []byte(s)}
}

func pol(name, typ, props string) v1beta1.AppPolicy {
	return v1beta1.AppPolicy{Name: name, Type: typ, Properties: raw(props)}
}

func deploy(name, props string) v1beta1.WorkflowStep {
	return v1beta1.WorkflowStep{WorkflowStepBase: v1beta1.WorkflowStepBase{Name: name, Type: v1beta1.WorkflowStepTypeDeploy, Properties: raw(props)}}
}

func app(policies []v1beta1.AppPolicy, steps ...v1beta1.WorkflowStep) *v1beta1.Application {
	a := &v1beta1.Application{Spec: v1beta1.ApplicationSpec{
		Components: []v1beta1.ApplicationComponent{{Name: "web", Type: "webservice"}},
		Policies:   policies,
	}}
	if steps != nil {
		a.Spec.Workflow = &v1beta1.Workflow{Steps: steps}
	}
	return a
}

// got summarises steps as "name: placements | overrides" lines.
func summary(steps []Step) []string {
	out := make([]string, 0, len(steps))
	for _, s := range steps {
		var pls, ovs []string
		for _, p := range s.Placements {
			pls = append(pls, p.String())
		}
		for _, o := range s.Overrides {
			ovs = append(ovs, o.Name)
		}
		out = append(out, s.Name+": "+strings.Join(pls, ",")+" | "+strings.Join(ovs, ","))
	}
	return out
}

func TestResolve(t *testing.T) {
	override := pol("bigger", v1beta1.PolicyTypeOverride, `{"components": [{"name": "web", "properties": {"replicas": 3}}]}`)
	tests := []struct {
		name    string
		app     *v1beta1.Application
		want    []string
		wantErr string
	}{{
		name: "no policies: the hub",
		app:  app(nil),
		want: []string{"deploy: local | "},
	}, {
		name: "clusters by name, in order, with namespace",
		app:  app([]v1beta1.AppPolicy{pol("t", v1beta1.PolicyTypeTopology, `{"clusters": ["us-1", "eu-1"], "namespace": "shop"}`)}),
		want: []string{"deploy: us-1/shop,eu-1/shop | "},
	}, {
		name: "label selector in registry order",
		app:  app([]v1beta1.AppPolicy{pol("t", v1beta1.PolicyTypeTopology, `{"clusterLabelSelector": {"region": "eu"}}`)}),
		want: []string{"deploy: eu-1,eu-2 | "},
	}, {
		name: "several labels must all match",
		app:  app([]v1beta1.AppPolicy{pol("t", v1beta1.PolicyTypeTopology, `{"clusterLabelSelector": {"region": "eu", "env": "prod"}}`)}),
		want: []string{"deploy: eu-1 | "},
	}, {
		name: "deprecated clusterSelector alias",
		app:  app([]v1beta1.AppPolicy{pol("t", v1beta1.PolicyTypeTopology, `{"clusterSelector": {"env": "prod"}}`)}),
		want: []string{"deploy: eu-1,us-1 | "},
	}, {
		name: "empty selector selects every cluster, local included",
		app:  app([]v1beta1.AppPolicy{pol("t", v1beta1.PolicyTypeTopology, `{"clusterLabelSelector": {}}`)}),
		want: []string{"deploy: local,eu-1,eu-2,us-1 | "},
	}, {
		name: "namespace only: the hub in that namespace",
		app:  app([]v1beta1.AppPolicy{pol("t", v1beta1.PolicyTypeTopology, `{"namespace": "shop"}`)}),
		want: []string{"deploy: local/shop | "},
	}, {
		// Without a workflow, KubeVela's generated one: a deploy step per
		// topology policy with every override; a cluster two topologies
		// select is delivered once, by the first.
		name: "generated steps: one per topology, duplicates once, every override",
		app: app([]v1beta1.AppPolicy{
			pol("eu", v1beta1.PolicyTypeTopology, `{"clusterLabelSelector": {"region": "eu"}}`),
			override,
			pol("prod", v1beta1.PolicyTypeTopology, `{"clusters": ["eu-1", "us-1", "local"]}`),
			pol("gc", "garbage-collect", `{"rules": []}`),
		}),
		want: []string{"deploy-eu: eu-1,eu-2 | bigger", "deploy-prod: us-1,local | bigger"},
	}, {
		name: "allowEmpty: nothing matches, nothing delivered",
		app:  app([]v1beta1.AppPolicy{pol("t", v1beta1.PolicyTypeTopology, `{"clusterLabelSelector": {"region": "mars"}, "allowEmpty": true}`)}),
		want: []string{"deploy:  | "},
	}, {
		name: "deploy steps in order, each with its own policies",
		app: app([]v1beta1.AppPolicy{
			pol("staging", v1beta1.PolicyTypeTopology, `{"clusterLabelSelector": {"env": "staging"}}`),
			pol("prod", v1beta1.PolicyTypeTopology, `{"clusterLabelSelector": {"env": "prod"}}`),
			override,
		},
			deploy("to-staging", `{"policies": ["staging"]}`),
			deploy("to-prod", `{"policies": ["bigger", "prod"], "parallelism": 2}`),
		),
		want: []string{"to-staging: eu-2 | ", "to-prod: eu-1,us-1 | bigger"},
	}, {
		name: "deploy step without topology: the hub, with overrides",
		app:  app([]v1beta1.AppPolicy{override}, deploy("d", `{"policies": ["bigger"]}`)),
		want: []string{"d: local | bigger"},
	}, {
		name: "deploy steps inside a step group, and inline policies",
		app: app(nil, v1beta1.WorkflowStep{
			WorkflowStepBase: v1beta1.WorkflowStepBase{Name: "group", Type: "step-group"},
			SubSteps: []v1beta1.WorkflowStepBase{{Name: "inner", Type: v1beta1.WorkflowStepTypeDeploy, Properties: raw(
				`{"inlinePolicies": [{"type": "topology", "properties": {"clusters": ["us-1"]}}]}`)}},
		}),
		want: []string{"inner: us-1 | "},
	}, {
		name: "a workflow of custom steps alone delivers no component, as in KubeVela",
		app: app([]v1beta1.AppPolicy{pol("t", v1beta1.PolicyTypeTopology, `{"clusters": ["eu-2"]}`)},
			v1beta1.WorkflowStep{WorkflowStepBase: v1beta1.WorkflowStepBase{Name: "notify", Type: "notification"}}),
		want: []string{},
	}, {
		name: "apply-component steps: the component, to the hub or the cluster named, beside deploy steps",
		app: app(nil,
			v1beta1.WorkflowStep{WorkflowStepBase: v1beta1.WorkflowStepBase{Name: "web-hub", Type: v1beta1.WorkflowStepTypeApplyComponent, Properties: raw(`{"component": "web"}`)}},
			v1beta1.WorkflowStep{WorkflowStepBase: v1beta1.WorkflowStepBase{Type: v1beta1.WorkflowStepTypeApplyComponent, Properties: raw(`{"component": "web", "cluster": "eu-1"}`)}},
			deploy("", `{"inlinePolicies": [{"type": "topology", "properties": {"clusters": ["us-1"]}}]}`),
		),
		want: []string{"web-hub: local | web-hub-component", "apply-component-2: eu-1 | apply-component-2-component", "deploy-1: us-1 | "},
	}, {
		name: "apply-component of a component the application does not have",
		app: app(nil,
			v1beta1.WorkflowStep{WorkflowStepBase: v1beta1.WorkflowStepBase{Name: "db", Type: v1beta1.WorkflowStepTypeApplyComponent, Properties: raw(`{"component": "db"}`)}}),
		wantErr: `step "db": component "db" is not one of spec.components`,
	}, {
		name: "apply-component to a cluster that is not registered",
		app: app(nil,
			v1beta1.WorkflowStep{WorkflowStepBase: v1beta1.WorkflowStepBase{Name: "web", Type: v1beta1.WorkflowStepTypeApplyComponent, Properties: raw(`{"component": "web", "cluster": "eu-9"}`)}}),
		wantErr: `step "web": cluster "eu-9" is not registered (registered: local, eu-1, eu-2, us-1)`,
	}, {
		name: "an apply-object step: its object, to the cluster named",
		app: app(nil,
			v1beta1.WorkflowStep{WorkflowStepBase: v1beta1.WorkflowStepBase{Type: v1beta1.WorkflowStepTypeApplyObject, Properties: raw(`{"value": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}, "cluster": "eu-2"}`)}}),
		want: []string{"apply-object-1: eu-2 | "},
	}, {
		name: "an apply-object step without a name for its object",
		app: app(nil,
			v1beta1.WorkflowStep{WorkflowStepBase: v1beta1.WorkflowStepBase{Name: "o", Type: v1beta1.WorkflowStepTypeApplyObject, Properties: raw(`{"value": {"apiVersion": "v1", "kind": "ConfigMap"}}`)}}),
		wantErr: `step "o": apply-object needs properties.value, an object with apiVersion, kind and metadata.name`,
	}, {
		name:    "unregistered cluster",
		app:     app([]v1beta1.AppPolicy{pol("prod", v1beta1.PolicyTypeTopology, `{"clusters": ["eu-9"]}`)}),
		wantErr: `topology policy "prod": cluster "eu-9" is not registered (registered: local, eu-1, eu-2, us-1)`,
	}, {
		name:    "selector matches nothing",
		app:     app([]v1beta1.AppPolicy{pol("mars", v1beta1.PolicyTypeTopology, `{"clusterLabelSelector": {"region": "mars", "env": "prod"}}`)}),
		wantErr: `topology policy "mars": no registered cluster has the labels {env=prod,region=mars}; set allowEmpty: true`,
	}, {
		name:    "empty clusters list",
		app:     app([]v1beta1.AppPolicy{pol("none", v1beta1.PolicyTypeTopology, `{"clusters": []}`)}),
		wantErr: `topology policy "none": clusters is empty; set allowEmpty: true`,
	}, {
		name:    "clusters and selector together",
		app:     app([]v1beta1.AppPolicy{pol("both", v1beta1.PolicyTypeTopology, `{"clusters": ["eu-1"], "clusterLabelSelector": {"a": "b"}}`)}),
		wantErr: `topology policy "both" sets both clusters and clusterLabelSelector`,
	}, {
		name:    "selector and its deprecated alias together",
		app:     app([]v1beta1.AppPolicy{pol("both", v1beta1.PolicyTypeTopology, `{"clusterSelector": {"a": "b"}, "clusterLabelSelector": {"a": "b"}}`)}),
		wantErr: `topology policy "both" sets both clusterLabelSelector and its deprecated alias clusterSelector`,
	}, {
		name:    "unknown field",
		app:     app([]v1beta1.AppPolicy{pol("typo", v1beta1.PolicyTypeTopology, `{"cluster": ["eu-1"]}`)}),
		wantErr: `topology policy "typo": properties: json: unknown field "cluster"`,
	}, {
		name:    "no properties",
		app:     app([]v1beta1.AppPolicy{pol("bare", v1beta1.PolicyTypeTopology, "")}),
		wantErr: `topology policy "bare" has no properties`,
	}, {
		name:    "invalid namespace",
		app:     app([]v1beta1.AppPolicy{pol("ns", v1beta1.PolicyTypeTopology, `{"namespace": "Shop_1"}`)}),
		wantErr: `topology policy "ns": namespace "Shop_1"`,
	}, {
		name:    "step names an unknown policy",
		app:     app(nil, deploy("to-prod", `{"policies": ["prod"]}`)),
		wantErr: `deploy step "to-prod": policy "prod" is not defined in the application's policies`,
	}, {
		name:    "bad override is reported at resolve time",
		app:     app([]v1beta1.AppPolicy{pol("o", v1beta1.PolicyTypeOverride, `{"components": [{"name": "web", "traits": [{"properties": {}}]}]}`)}),
		wantErr: `override policy "o": components[0].traits[0]: type is required`,
	}, {
		name:    "duplicate policy names",
		app:     app([]v1beta1.AppPolicy{pol("t", v1beta1.PolicyTypeTopology, `{}`), pol("t", v1beta1.PolicyTypeOverride, `{"components": []}`)}),
		wantErr: `policy "t" is defined twice`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps, err := Resolve(tt.app, registry)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := summary(steps); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("steps = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestResolve_HubIsTheEmptyClusterName(t *testing.T) {
	_, err := Resolve(app([]v1beta1.AppPolicy{pol("t", v1beta1.PolicyTypeTopology, `{"clusters": ["local", "eu-1"]}`)}), nil)
	if err == nil {
		t.Fatal("eu-1 resolved although no cluster was passed")
	}
	steps, err := Resolve(app([]v1beta1.AppPolicy{pol("t", v1beta1.PolicyTypeTopology, `{"clusters": ["local"]}`)}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Placement{{Cluster: ""}}; !reflect.DeepEqual(steps[0].Placements, want) {
		t.Fatalf("placements = %+v, want %+v", steps[0].Placements, want)
	}
}

func TestResolve_Parallelism(t *testing.T) {
	steps, err := Resolve(app(nil, deploy("a", `{"parallelism": 2}`), deploy("", `{}`)), registry)
	if err != nil {
		t.Fatal(err)
	}
	if steps[0].Parallelism != 2 || steps[1].Parallelism != DefaultParallelism || steps[1].Name != "deploy-2" {
		t.Fatalf("steps = %+v", steps)
	}
}
