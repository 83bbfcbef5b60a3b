package placement

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/workflow"
)

// WithInputs returns the steps to render now for a flow whose steps pass
// values: a step taking inputs is rendered with the values exported so
// far (values, by output name) once all of them are there, and left out
// until then, since what it renders is not known yet. rendered says, for
// each step rendered with inputs, with which values
// (workflow.RenderedWith), for the version's tracker to record. Steps
// without inputs are returned as they are.
func WithInputs(steps []Step, flow workflow.Flow, values map[string]json.RawMessage) (deliver []Step, rendered map[string]string, err error) {
	byName := map[string]workflow.Step{}
	for s := range flow.All() {
		byName[s.Name] = s
	}
	rendered = map[string]string{}
	for _, st := range steps {
		fs, ok := byName[st.Name]
		if !ok || len(fs.Inputs) == 0 {
			deliver = append(deliver, st)
			continue
		}
		taken, ok := fs.InputValues(values)
		if !ok {
			continue
		}
		if st.Object != nil {
			obj := st.Object.DeepCopy()
			props := map[string]any{"value": obj.Object}
			if err := fs.Fill(props, values); err != nil {
				return nil, nil, &workflow.InvalidWorkflowError{Err: err}
			}
			filled, isObject := props["value"].(map[string]any)
			if !isObject {
				return nil, nil, &workflow.InvalidWorkflowError{Err: fmt.Errorf("step %q: its inputs leave value without an object", st.Name)}
			}
			obj.Object = filled
			st.Object = obj
		} else {
			fill := fs
			st.fill = func(props map[string]any) error { return fill.Fill(props, values) }
		}
		rendered[st.Name] = workflow.RenderedWith(taken)
		deliver = append(deliver, st)
	}
	return deliver, rendered, nil
}

// fillInputs sets a step's inputs into the properties of the components
// it delivers.
func (s Step) fillInputs(comps []v1beta1.ApplicationComponent) error {
	if s.fill == nil {
		return nil
	}
	for i := range comps {
		props := map[string]any{}
		if comps[i].Properties != nil && len(comps[i].Properties.Raw) > 0 {
			if err := json.Unmarshal(comps[i].Properties.Raw, &props); err != nil {
				return fmt.Errorf("component %q: properties: %w", comps[i].Name, err)
			}
		}
		spec := map[string]any{"properties": props}
		if err := s.fill(spec); err != nil {
			return &workflow.InvalidWorkflowError{Err: err}
		}
		raw, err := json.Marshal(spec["properties"])
		if err != nil {
			return err
		}
		comps[i].Properties = &runtime.RawExtension{Raw: raw}
	}
	return nil
}
