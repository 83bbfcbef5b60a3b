package placement

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/steward-oam/steward/api/v1beta1"
)

// overrideSpec is the override policy's properties, as KubeVela defines
// them.
type overrideSpec struct {
	// Components are patches, applied in order.
	Components []componentPatch `json:"components"`
	// Selector keeps only the named components; empty keeps all.
	Selector []string `json:"selector,omitempty"`
}

// componentPatch selects components and patches them.
type componentPatch struct {
	// Name selects a component by name, or by a pattern where * matches any
	// run of characters; empty selects every component (of Type, if set).
	Name string `json:"name,omitempty"`
	// Type changes the selected components' type (or, with no Name,
	// selects the components of that type).
	Type string `json:"type,omitempty"`
	// Properties are merged into the component's as a JSON merge patch.
	Properties json.RawMessage `json:"properties,omitempty"`
	// Traits are patched by type.
	Traits []traitPatch `json:"traits,omitempty"`
}

// traitPatch patches, adds or removes one trait of a component.
type traitPatch struct {
	Type       string          `json:"type"`
	Properties json.RawMessage `json:"properties,omitempty"`
	// Disable removes the trait.
	Disable bool `json:"disable,omitempty"`
}

func parseOverride(p v1beta1.AppPolicy) (overrideSpec, error) {
	var spec overrideSpec
	if p.Properties == nil || len(p.Properties.Raw) == 0 {
		return spec, fmt.Errorf("override policy %q has no properties: set components", p.Name)
	}
	dec := json.NewDecoder(bytes.NewReader(p.Properties.Raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&spec); err != nil {
		return spec, fmt.Errorf("override policy %q: properties: %w", p.Name, err)
	}
	for i, c := range spec.Components {
		where := fmt.Sprintf("override policy %q: components[%d]", p.Name, i)
		if err := checkObject(c.Properties); err != nil {
			return spec, fmt.Errorf("%s: properties: %w", where, err)
		}
		if strings.Contains(c.Name, "*") {
			if _, err := path.Match(c.Name, ""); err != nil {
				return spec, fmt.Errorf("%s: name pattern %q: %w", where, c.Name, err)
			}
		}
		for j, t := range c.Traits {
			if t.Type == "" {
				return spec, fmt.Errorf("%s.traits[%d]: type is required", where, j)
			}
			if err := checkObject(t.Properties); err != nil {
				return spec, fmt.Errorf("%s.traits[%d] (%s): properties: %w", where, j, t.Type, err)
			}
		}
	}
	return spec, nil
}

// checkObject accepts no properties, null, or a JSON object.
func checkObject(raw json.RawMessage) error {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) || trimmed[0] == '{' {
		return nil
	}
	return fmt.Errorf("want an object, got %s", trimmed)
}

// ApplyOverrides returns comps shaped by the override policies, in order;
// comps is not modified. For each patch of a policy:
//   - the selected components are those named (exactly, or by a pattern
//     with *), or with no name every component, or every component of
//     the patch's type when it sets one;
//   - properties merge as a JSON merge patch (RFC 7386): objects merge key
//     by key, null deletes a key, anything else replaces;
//   - a type different from the component's replaces the type and its
//     properties (the old ones belong to another definition); traits stay;
//   - each trait patch merges into the trait of that type, adds the trait
//     when missing, or removes it with disable: true;
//   - a name that selects nothing adds a new component when the patch sets
//     a type, else it is an error.
//
// Then a selector keeps only the components it names, in their order.
func ApplyOverrides(comps []v1beta1.ApplicationComponent, overrides []v1beta1.AppPolicy) ([]v1beta1.ApplicationComponent, error) {
	out := make([]v1beta1.ApplicationComponent, len(comps))
	for i := range comps {
		out[i] = *comps[i].DeepCopy()
	}
	for _, p := range overrides {
		spec, err := parseOverride(p)
		if err != nil {
			return nil, err
		}
		if out, err = applyOverride(p.Name, out, spec); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func applyOverride(policy string, comps []v1beta1.ApplicationComponent, spec overrideSpec) ([]v1beta1.ApplicationComponent, error) {
	for i, patch := range spec.Components {
		targets := selectComponents(comps, patch)
		if len(targets) == 0 {
			added, err := addComponent(policy, i, patch)
			if err != nil {
				return nil, err
			}
			if added != nil {
				comps = append(comps, *added)
			}
			continue
		}
		for _, idx := range targets {
			patched, err := patchComponent(comps[idx], patch)
			if err != nil {
				return nil, fmt.Errorf("override policy %q: component %q: %w", policy, comps[idx].Name, err)
			}
			comps[idx] = patched
		}
	}
	if len(spec.Selector) == 0 {
		return comps, nil
	}
	return selectNamed(policy, comps, spec.Selector)
}

// selectComponents returns the indexes of the components a patch selects.
func selectComponents(comps []v1beta1.ApplicationComponent, patch componentPatch) []int {
	var out []int
	for i, c := range comps {
		var match bool
		switch {
		case patch.Name == "":
			match = patch.Type == "" || patch.Type == c.Type
		case strings.Contains(patch.Name, "*"):
			match, _ = path.Match(patch.Name, c.Name)
		default:
			match = patch.Name == c.Name
		}
		if match {
			out = append(out, i)
		}
	}
	return out
}

// addComponent turns a patch that selects nothing into a new component,
// or explains why it cannot. Patches selecting by type or pattern that
// match nothing add nothing.
func addComponent(policy string, i int, patch componentPatch) (*v1beta1.ApplicationComponent, error) {
	switch {
	case patch.Name == "" || strings.Contains(patch.Name, "*"):
		return nil, nil
	case patch.Type == "":
		return nil, fmt.Errorf("override policy %q: components[%d]: the application has no component %q; set type to add it", policy, i, patch.Name)
	}
	c := v1beta1.ApplicationComponent{Name: patch.Name, Type: patch.Type, Properties: rawExtension(patch.Properties)}
	for _, t := range patch.Traits {
		if !t.Disable {
			c.Traits = append(c.Traits, v1beta1.ApplicationTrait{Type: t.Type, Properties: rawExtension(t.Properties)})
		}
	}
	return &c, nil
}

func patchComponent(c v1beta1.ApplicationComponent, patch componentPatch) (v1beta1.ApplicationComponent, error) {
	var err error
	if patch.Name != "" && patch.Type != "" && patch.Type != c.Type {
		c.Type, c.Properties = patch.Type, rawExtension(patch.Properties)
	} else if c.Properties, err = mergeProperties(c.Properties, patch.Properties); err != nil {
		return c, fmt.Errorf("properties: %w", err)
	}
	for _, tp := range patch.Traits {
		idx := -1
		for j, t := range c.Traits {
			if t.Type == tp.Type {
				idx = j
				break
			}
		}
		switch {
		case tp.Disable && idx >= 0:
			c.Traits = append(c.Traits[:idx:idx], c.Traits[idx+1:]...)
		case tp.Disable:
		case idx >= 0:
			if c.Traits[idx].Properties, err = mergeProperties(c.Traits[idx].Properties, tp.Properties); err != nil {
				return c, fmt.Errorf("trait %q: properties: %w", tp.Type, err)
			}
		default:
			c.Traits = append(c.Traits, v1beta1.ApplicationTrait{Type: tp.Type, Properties: rawExtension(tp.Properties)})
		}
	}
	return c, nil
}

// selectNamed keeps the components the selector names, in their order.
func selectNamed(policy string, comps []v1beta1.ApplicationComponent, selector []string) ([]v1beta1.ApplicationComponent, error) {
	keep := make(map[string]bool, len(selector))
	for _, n := range selector {
		keep[n] = true
	}
	out := make([]v1beta1.ApplicationComponent, 0, len(selector))
	for _, c := range comps {
		if keep[c.Name] {
			out = append(out, c)
			delete(keep, c.Name)
		}
	}
	for _, n := range selector {
		if keep[n] {
			return nil, fmt.Errorf("override policy %q: selector names component %q, which the application does not have", policy, n)
		}
	}
	return out, nil
}

// mergeProperties applies patch to base as an RFC 7386 JSON merge patch.
// No patch leaves base untouched, byte for byte.
func mergeProperties(base *runtime.RawExtension, patch json.RawMessage) (*runtime.RawExtension, error) {
	if len(bytes.TrimSpace(patch)) == 0 || bytes.Equal(bytes.TrimSpace(patch), []byte("null")) {
		return base, nil
	}
	var b, p any
	if base != nil && len(base.Raw) > 0 {
		if err := decodeNumbers(base.Raw, &b); err != nil {
			return nil, err
		}
	}
	if err := decodeNumbers(patch, &p); err != nil {
		return nil, err
	}
	merged, err := json.Marshal(mergeValue(b, p))
	if err != nil {
		return nil, err
	}
	return &runtime.RawExtension{Raw: merged}, nil
}

func mergeValue(base, patch any) any {
	pm, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	bm, ok := base.(map[string]any)
	if !ok {
		bm = map[string]any{}
	}
	for k, v := range pm {
		if v == nil {
			delete(bm, k)
			continue
		}
		bm[k] = mergeValue(bm[k], v)
	}
	return bm
}

// decodeNumbers decodes JSON keeping numbers exact (json.Number).
func decodeNumbers(raw []byte, into *any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(into)
}

func rawExtension(raw json.RawMessage) *runtime.RawExtension {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return nil
	}
	return &runtime.RawExtension{Raw: append([]byte(nil), trimmed...)}
}
