package render

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/steward-oam/steward/api/v1beta1"
)

// objectMeta finishes rendered objects: default name and namespace and the
// bookkeeping labels every object of an Application carries.
type objectMeta struct {
	app       *v1beta1.Application
	component string
	revision  string
	// replicaKey, for a copy of a replicated component, labels what it
	// renders (LabelReplicaKey).
	replicaKey string
}

// LabelReplicaKey, KubeVela's, names the replication key of the copy of a
// component that rendered an object.
const LabelReplicaKey = "app.oam.dev/replicaKey"

// TypeLabel is the label value naming a definition type on the objects
// it renders: the type, or for a pinned type (webservice@v2) the
// revision's name (webservice-v2), which a label can hold, as KubeVela
// labels them.
func TypeLabel(typ string) string {
	if name, rev, ok := strings.Cut(typ, "@v"); ok && name != "" && rev != "" {
		return name + "-v" + rev
	}
	return typ
}

// workload finishes the component's workload: named after the component
// unless the template names it, labelled with the component type.
func (m objectMeta) workload(obj map[string]any, compType string) (*unstructured.Unstructured, error) {
	u, err := m.finish(obj, m.component)
	if err != nil {
		return nil, err
	}
	labels := u.GetLabels()
	labels[v1beta1.LabelWorkloadType] = TypeLabel(compType)
	u.SetLabels(labels)
	return u, nil
}

// auxiliary finishes one object of `outputs`, labelled with the trait type
// that rendered it (AuxiliaryWorkload for the component's own outputs) and
// its output name. An unnamed object is named <component>-<output name>.
func (m objectMeta) auxiliary(obj map[string]any, a Auxiliary) (*unstructured.Unstructured, error) {
	u, err := m.finish(obj, m.component+"-"+a.Name)
	if err != nil {
		return nil, err
	}
	traitType := TypeLabel(a.Trait)
	if traitType == "" {
		traitType = auxiliaryWorkload
	}
	labels := u.GetLabels()
	labels[v1beta1.LabelTraitType] = traitType
	labels[v1beta1.LabelTraitResource] = a.Name
	u.SetLabels(labels)
	return u, nil
}

func (m objectMeta) finish(obj map[string]any, defaultName string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{Object: obj}
	if u.GetAPIVersion() == "" || u.GetKind() == "" {
		return nil, fmt.Errorf("rendered object has no apiVersion or kind")
	}
	if _, ok := obj["metadata"].(map[string]any); !ok {
		if _, exists := obj["metadata"]; exists {
			return nil, fmt.Errorf("%s metadata is not an object", u.GetKind())
		}
	}
	if u.GetName() == "" {
		u.SetName(defaultName)
	}
	if u.GetNamespace() == "" {
		u.SetNamespace(m.app.Namespace)
	}
	labels := u.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[v1beta1.LabelAppName] = m.app.Name
	labels[v1beta1.LabelAppNamespace] = m.app.Namespace
	labels[v1beta1.LabelAppComponent] = m.component
	labels[v1beta1.LabelAppRevision] = m.revision
	if m.replicaKey != "" {
		labels[LabelReplicaKey] = m.replicaKey
	}
	u.SetLabels(labels)
	return u, nil
}
