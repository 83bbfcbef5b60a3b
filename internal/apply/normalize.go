package apply

import (
	"encoding/base64"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// quantityMaps are keys whose values are resource quantities.
var quantityMaps = map[string]bool{"limits": true, "requests": true, "capacity": true, "hard": true}

// normalize rewrites desired the way the API server stores it, so that a
// value the server canonicalises ("0.5" CPU stored as "500m", a Secret's
// stringData stored as data) does not look like drift on every pass and
// get patched again: a steady-state pass must write nothing.
func normalize(desired *unstructured.Unstructured) *unstructured.Unstructured {
	out := desired.DeepCopy()
	canonicalQuantities(out.Object)
	if out.GetKind() == "Secret" && out.GroupVersionKind().Group == "" {
		foldStringData(out.Object)
	}
	return out
}

func canonicalQuantities(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, child := range x {
			if m, ok := child.(map[string]any); ok && quantityMaps[k] {
				for name, q := range m {
					if s, ok := canonicalQuantity(q); ok {
						m[name] = s
					}
				}
			}
			canonicalQuantities(child)
		}
	case []any:
		for _, child := range x {
			canonicalQuantities(child)
		}
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
