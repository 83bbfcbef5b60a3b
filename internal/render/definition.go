package render

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/steward-oam/steward/api/v1beta1"
)

// Where a definition's template is read from.
const (
	FieldSchematicTemplate = "spec.schematic.cue.template"
	FieldExtensionTemplate = "spec.extension.template"
)

// Template is the CUE template a definition renders with, as KubeVela
// reads it (its appfile's loadSchematicToTemplate): spec.schematic.cue.template,
// else, when that is absent or empty, the string spec.extension.template of
// definitions written before KubeVela v1.0.
type Template struct {
	// Text is the CUE source; empty when there is none.
	Text string
	// Field is where Text was read: FieldSchematicTemplate or
	// FieldExtensionTemplate; empty when the definition has no template.
	Field string
}

// ComponentTemplate is the template of a ComponentDefinition. The error
// says spec.extension cannot be read; the Template is then empty.
func ComponentTemplate(def *v1beta1.ComponentDefinition) (Template, error) {
	return definitionTemplate(def.Spec.Schematic, def.Spec.Extension)
}

// TraitTemplate is the template of a TraitDefinition, read like
// ComponentTemplate.
func TraitTemplate(def *v1beta1.TraitDefinition) (Template, error) {
	return definitionTemplate(def.Spec.Schematic, def.Spec.Extension)
}

// PolicyTemplate is the template of a PolicyDefinition, which has no
// extension: spec.schematic.cue.template only.
func PolicyTemplate(def *v1beta1.PolicyDefinition) Template {
	t, _ := definitionTemplate(def.Spec.Schematic, nil)
	return t
}

// definitionTemplate reads the schematic's template, else the extension's.
// A schematic with an empty template falls back to the extension, as in
// KubeVela; one with no other template keeps its empty one.
func definitionTemplate(s *v1beta1.Schematic, ext *runtime.RawExtension) (Template, error) {
	var t Template
	if s != nil && s.CUE != nil {
		t = Template{Text: s.CUE.Template, Field: FieldSchematicTemplate}
		if t.Text != "" {
			return t, nil
		}
	}
	fields, err := extensionFields(ext)
	if err != nil {
		return t, err
	}
	if text, ok := fields["template"].(string); ok && text != "" {
		return Template{Text: text, Field: FieldExtensionTemplate}, nil
	}
	return t, nil
}

// IgnoredExtensionFields lists the fields of spec.extension that KubeVela
// v1.0 moved into spec.status and no longer reads there (healthPolicy,
// customStatus): Steward ignores them too, and the definition's status
// says so.
func IgnoredExtensionFields(ext *runtime.RawExtension) []string {
	fields, _ := extensionFields(ext)
	var out []string
	for _, f := range []string{"healthPolicy", "customStatus"} {
		if _, ok := fields[f]; ok {
			out = append(out, f)
		}
	}
	return out
}

// extensionFields decodes spec.extension; nil when absent.
func extensionFields(ext *runtime.RawExtension) (map[string]any, error) {
	if ext == nil || len(ext.Raw) == 0 || string(ext.Raw) == "null" {
		return nil, nil
	}
	var fields map[string]any
	if err := json.Unmarshal(ext.Raw, &fields); err != nil {
		return nil, fmt.Errorf("spec.extension is not an object: %w", err)
	}
	return fields, nil
}
