package placement_test

import (
	"errors"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/placement"
	"github.com/steward-oam/steward/internal/workflow"
)

// Values passed between components are refused, not dropped: a component
// would be delivered without the value its inputs name.
func TestResolve_RefusesComponentInputsAndOutputs(t *testing.T) {
	app := &v1beta1.Application{}
	if err := yaml.Unmarshal([]byte(`spec:
  components:
    - {name: db, type: x, outputs: [{name: ip, valueFrom: output.status.podIP}]}
    - {name: api, type: x, inputs: [{from: ip, parameterKey: env.DB}]}`), app); err != nil {
		t.Fatal(err)
	}
	_, err := placement.Resolve(app, nil)
	if !errors.As(err, new(*workflow.UnsupportedError)) || !strings.Contains(err.Error(), `inputs and outputs of component "db"`) {
		t.Fatalf("error %v", err)
	}
}
