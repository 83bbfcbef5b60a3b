package scenario

import (
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/steward-oam/steward/api/v1beta1"
)

func TestShapeOf_MatchesTheScenarioSizes(t *testing.T) {
	for _, c := range []struct {
		n    int
		want AppShape
	}{
		{4, AppShape{Components: 1, ConfigMaps: 2}},
		{8, AppShape{Components: 1, ConfigMaps: 6}},
		{100, AppShape{Components: 25, ConfigMaps: 2}},
		{500, AppShape{Components: 125, ConfigMaps: 2}},
	} {
		got := ShapeOf(c.n)
		if got != c.want || got.Resources() != c.n {
			t.Errorf("ShapeOf(%d) = %+v (%d objects), want %+v", c.n, got, got.Resources(), c.want)
		}
	}
}

func TestNewApplication_UsesTheBenchComponentOnce(t *testing.T) {
	app, err := NewApplication("bench", "app-0001", AppShape{Components: 3, ConfigMaps: 2}, map[string]string{"a": "b"})
	if err != nil {
		t.Fatal(err)
	}
	if len(app.Spec.Components) != 3 || app.Annotations["a"] != "b" {
		t.Fatalf("app = %+v", app)
	}
	seen := map[string]bool{}
	for _, c := range app.Spec.Components {
		var props map[string]int
		if err := json.Unmarshal(c.Properties.Raw, &props); err != nil || props["configMaps"] != 2 {
			t.Errorf("component %s properties = %s, %v", c.Name, c.Properties.Raw, err)
		}
		if c.Type != ComponentType || seen[c.Name] {
			t.Errorf("component %s: type %s, duplicate %v", c.Name, c.Type, seen[c.Name])
		}
		seen[c.Name] = true
	}
}

func TestIsReady_ReadsStewardConditionsAndKubeVelaPhase(t *testing.T) {
	app := &v1beta1.Application{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
	if IsReady(app) {
		t.Errorf("empty status is ready")
	}
	app.Status.Phase = v1beta1.ApplicationRunning
	if !IsReady(app) {
		t.Errorf("running phase without conditions is not ready")
	}
	v1beta1.SetCondition(&app.Status.Conditions, v1beta1.Condition{Type: v1beta1.ConditionReady, Status: metav1.ConditionTrue, Reason: "Succeeded"})
	app.Status.ObservedGeneration = 1
	if IsReady(app) {
		t.Errorf("ready for an older generation counts as ready")
	}
	app.Status.ObservedGeneration = 2
	if !IsReady(app) {
		t.Errorf("ready condition for the generation is not ready")
	}
}

func TestUnrelatedDeployment_IsAboutTwoKilobytes(t *testing.T) {
	d := UnrelatedDeployment("unrelated", "unrelated-00001")
	if n := jsonSize(d); n < 1500 || n > 2600 {
		t.Errorf("unrelated Deployment is %d bytes of JSON, want about 2 KB", n)
	}
	if len(d.Spec.Template.Spec.Containers[0].Env) != 10 {
		t.Errorf("want ten env vars")
	}
}
