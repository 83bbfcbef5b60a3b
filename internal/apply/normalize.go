package apply

import (
	"encoding/base64"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// normalize rewrites desired the way the API server stores it, so that a
// value the server canonicalises ("0.5" CPU stored as "500m", a Secret's
// stringData stored as data) does not look like drift on every pass and
// get patched again: a steady-state pass must write nothing.
//
// Only fields whose schema is known to be a resource.Quantity are touched:
// those of the built-in kinds listed in quantityFields. A custom resource
// is never rewritten, whatever its fields are called: its schema may say
// integer (and reject "1k") or string (and keep "1000" as written).
func normalize(desired *unstructured.Unstructured) *unstructured.Unstructured {
	out := desired.DeepCopy()
	gvk := out.GroupVersionKind()
	for _, path := range quantityFields[groupKind{gvk.Group, gvk.Kind}] {
		canonicalAt(out.Object, path)
	}
	if gvk.Kind == "Secret" && gvk.Group == "" {
		foldStringData(out.Object)
	}
	return out
}

// groupKind keys quantityFields: every served version of these kinds has
// its quantities at the same paths.
type groupKind struct{ group, kind string }

// A path is a list of field names; "[]" steps into every element of a
// list and "*" (last only) means every value of a map of quantities.
type path []string

// podSpecQuantities are the resource.Quantity fields of a core/v1 PodSpec.
var podSpecQuantities = []path{
	{"containers", "[]", "resources", "limits", "*"},
	{"containers", "[]", "resources", "requests", "*"},
	{"initContainers", "[]", "resources", "limits", "*"},
	{"initContainers", "[]", "resources", "requests", "*"},
	{"ephemeralContainers", "[]", "resources", "limits", "*"},
	{"ephemeralContainers", "[]", "resources", "requests", "*"},
	{"resources", "limits", "*"},
	{"resources", "requests", "*"},
	{"overhead", "*"},
	{"volumes", "[]", "emptyDir", "sizeLimit"},
	{"volumes", "[]", "ephemeral", "volumeClaimTemplate", "spec", "resources", "limits", "*"},
	{"volumes", "[]", "ephemeral", "volumeClaimTemplate", "spec", "resources", "requests", "*"},
}

// claimSpecQuantities are the resource.Quantity fields of a
// PersistentVolumeClaimSpec.
var claimSpecQuantities = []path{
	{"resources", "limits", "*"},
	{"resources", "requests", "*"},
}

// quantityFields lists, per built-in kind, the fields the API server
// stores as canonical quantities.
var quantityFields = map[groupKind][]path{
	{"", "Pod"}:                   under(path{"spec"}, podSpecQuantities),
	{"", "PodTemplate"}:           under(path{"template", "spec"}, podSpecQuantities),
	{"", "ReplicationController"}: under(path{"spec", "template", "spec"}, podSpecQuantities),
	{"apps", "Deployment"}:        under(path{"spec", "template", "spec"}, podSpecQuantities),
	{"apps", "ReplicaSet"}:        under(path{"spec", "template", "spec"}, podSpecQuantities),
	{"apps", "DaemonSet"}:         under(path{"spec", "template", "spec"}, podSpecQuantities),
	{"apps", "StatefulSet"}: append(under(path{"spec", "template", "spec"}, podSpecQuantities),
		under(path{"spec", "volumeClaimTemplates", "[]", "spec"}, claimSpecQuantities)...),
	{"batch", "Job"}:              under(path{"spec", "template", "spec"}, podSpecQuantities),
	{"batch", "CronJob"}:          under(path{"spec", "jobTemplate", "spec", "template", "spec"}, podSpecQuantities),
	{"", "PersistentVolumeClaim"}: under(path{"spec"}, claimSpecQuantities),
	{"", "PersistentVolume"}:      {{"spec", "capacity", "*"}},
	{"", "ResourceQuota"}:         {{"spec", "hard", "*"}},
	{"", "LimitRange"}:            under(path{"spec", "limits", "[]"}, []path{{"max", "*"}, {"min", "*"}, {"default", "*"}, {"defaultRequest", "*"}, {"maxLimitRequestRatio", "*"}}),
}

// under prefixes every path with prefix.
func under(prefix path, paths []path) []path {
	out := make([]path, len(paths))
	for i, p := range paths {
		out[i] = append(append(path{}, prefix...), p...)
	}
	return out
}

// canonicalAt rewrites the quantities at p inside v; a missing or
// differently shaped field is left alone.
func canonicalAt(v any, p path) {
	if len(p) == 0 {
		return
	}
	switch p[0] {
	case "[]":
		list, _ := v.([]any)
		for _, item := range list {
			canonicalAt(item, p[1:])
		}
	case "*":
		m, _ := v.(map[string]any)
		for name, q := range m {
			if s, ok := canonicalQuantity(q); ok {
				m[name] = s
			}
		}
	default:
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		if len(p) == 1 {
			if s, ok := canonicalQuantity(m[p[0]]); ok {
				m[p[0]] = s
			}
			return
		}
		canonicalAt(m[p[0]], p[1:])
	}
}

func canonicalQuantity(v any) (string, bool) {
	var q resource.Quantity
	var err error
	switch x := v.(type) {
	case string:
		q, err = resource.ParseQuantity(x)
	case int64:
		q = *resource.NewQuantity(x, resource.DecimalSI)
	case float64:
		q, err = resource.ParseQuantity(formatFloat(x))
	default:
		return "", false
	}
	if err != nil {
		return "", false
	}
	return q.String(), true
}

// foldStringData moves stringData into data, base64-encoded, as the API
// server does on write.
func foldStringData(obj map[string]any) {
	sd, ok := obj["stringData"].(map[string]any)
	if !ok {
		return
	}
	data, _ := obj["data"].(map[string]any)
	if data == nil {
		data = map[string]any{}
	}
	for k, v := range sd {
		if s, ok := v.(string); ok {
			data[k] = base64.StdEncoding.EncodeToString([]byte(s))
		}
	}
	obj["data"] = data
	delete(obj, "stringData")
}
