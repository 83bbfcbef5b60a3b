package placement

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/steward-oam/steward/api/v1beta1"
)

func replicationPolicy(name, props string) v1beta1.AppPolicy {
	return v1beta1.AppPolicy{Name: name, Type: "replication", Properties: &runtime.RawExtension{Raw: []byte(props)}}
}

// KubeVela's replication: each selected component becomes one copy per
// key, after the components no policy selects; names stay.
func TestReplicate(t *testing.T) {
	comps := []v1beta1.ApplicationComponent{{Name: "db", Type: "t"}, {Name: "web", Type: "t"}, {Name: "cache", Type: "t"}}
	got, err := Replicate(comps, []v1beta1.AppPolicy{replicationPolicy("regions", `{"keys": ["eu", "us"], "selector": ["web", "cache"]}`)})
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, c := range got {
		seen = append(seen, c.Name+"/"+c.ReplicaKey)
	}
	if want := "db/ web/eu web/us cache/eu cache/us"; strings.Join(seen, " ") != want {
		t.Errorf("got %s, want %s", strings.Join(seen, " "), want)
	}
	if comps[1].ReplicaKey != "" {
		t.Error("the Application's components were changed")
	}
	if same, _ := Replicate(comps, nil); len(same) != 3 {
		t.Error("no policy: the components as they are")
	}
	for props, want := range map[string]string{
		`{"keys": ["eu"], "selector": ["nope"]}`: `policy "bad" (replication): no component selected to replicate`,
		`{"keys": ["eu"], "selectors": ["web"]}`: `policy "bad" (replication): properties: json: unknown field "selectors"`,
	} {
		if _, err := Replicate(comps, []v1beta1.AppPolicy{replicationPolicy("bad", props)}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", props, err, want)
		}
	}
}

// A deploy step applies the replication policies it names (listed or
// inline) after its overrides; the implicit step, without a workflow,
// names none, as KubeVela's replication "only works with a deploy step".
func TestResolve_DeployStepReplicates(t *testing.T) {
	app := &v1beta1.Application{}
	// A replicaKey written in the spec is ignored: only the policy sets one.
	app.Spec.Components = []v1beta1.ApplicationComponent{{Name: "web", Type: "t", ReplicaKey: "written"}}
	app.Spec.Policies = []v1beta1.AppPolicy{replicationPolicy("regions", `{"keys": ["eu", "us"], "selector": ["web"]}`)}
	steps, err := Resolve(app, nil)
	if err != nil {
		t.Fatal(err)
	}
	if comps, _ := steps[0].Components(app); len(comps) != 1 || comps[0].ReplicaKey != "" {
		t.Errorf("implicit step replicated: %+v", comps)
	}
	app.Spec.Workflow = &v1beta1.Workflow{Steps: []v1beta1.WorkflowStep{
		{WorkflowStepBase: v1beta1.WorkflowStepBase{Name: "listed", Type: v1beta1.WorkflowStepTypeDeploy, Properties: &runtime.RawExtension{Raw: []byte(`{"policies": ["regions"]}`)}}},
		{WorkflowStepBase: v1beta1.WorkflowStepBase{Name: "inline", Type: v1beta1.WorkflowStepTypeDeploy, Properties: &runtime.RawExtension{Raw: []byte(`{"inlinePolicies": [{"type": "replication", "properties": {"keys": ["a", "b", "c"], "selector": ["web"]}}]}`)}}},
	}}
	steps, err = Resolve(app, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{2, 3} {
		comps, err := steps[i].Components(app)
		if err != nil || len(comps) != want || comps[0].ReplicaKey == "" {
			t.Errorf("step %s: %d copies (%v), want %d", steps[i].Name, len(comps), err, want)
		}
	}
	app.Spec.Policies[0] = replicationPolicy("regions", `{"keys": "eu"}`)
	if _, err := Resolve(app, nil); err == nil || !strings.Contains(err.Error(), `policy "regions" (replication)`) {
		t.Errorf("malformed replication: %v", err)
	}
}
