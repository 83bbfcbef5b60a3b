package release

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// defaultValuesKey is the key valuesFrom reads by default (Flux's and
// Helm's convention).
const defaultValuesKey = "values.yaml"

// Values merges valuesFrom, in order, under the inline values: maps merge
// key by key, anything else (lists included) is replaced, and null is
// kept. Sources are read with r (the Application's identity, on the hub)
// and must be in the release's or the Application's namespace.
func Values(ctx context.Context, r client.Reader, p *Params, appNamespace string) (map[string]any, error) {
	releaseNS := p.ReleaseNamespace(appNamespace)
	out := map[string]any{}
	for i, vf := range p.ValuesFrom {
		ns := vf.Namespace
		if ns == "" {
			ns = releaseNS
		}
		what := fmt.Sprintf("valuesFrom[%d] (%s %s/%s)", i, vf.Kind, ns, vf.Name)
		if ns != releaseNS && ns != appNamespace {
			return nil, fmt.Errorf("%s: a values source must be in the release's namespace %q or the Application's %q", what, releaseNS, appNamespace)
		}
		key := vf.Key
		if key == "" {
			key = defaultValuesKey
		}
		data, found, err := read(ctx, r, vf.Kind, client.ObjectKey{Namespace: ns, Name: vf.Name}, key)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		if !found {
			if vf.Optional {
				continue
			}
			return nil, fmt.Errorf("%s: not found or has no key %q (set optional: true to go on without it)", what, key)
		}
		var layer map[string]any
		if err := yaml.Unmarshal(data, &layer); err != nil {
			return nil, fmt.Errorf("%s: key %q is not YAML values: %w", what, key, err)
		}
		out = Merge(out, layer)
	}
	return Merge(out, p.Values), nil
}

// read returns a ConfigMap's or Secret's key; found is false when the
// object or the key is missing.
func read(ctx context.Context, r client.Reader, kind string, at client.ObjectKey, key string) (data []byte, found bool, err error) {
	var obj client.Object
	switch kind {
	case "ConfigMap":
		obj = &corev1.ConfigMap{}
	case "Secret":
		obj = &corev1.Secret{}
	default:
		return nil, false, fmt.Errorf("kind must be ConfigMap or Secret")
	}
	if err := r.Get(ctx, at, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, false, nil
		}
		return nil, false, err
	}
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		if _, bin := o.BinaryData[key]; bin {
			return nil, false, fmt.Errorf("key %q is in binaryData, which is not read", key)
		}
		s, ok := o.Data[key]
		return []byte(s), ok, nil
	case *corev1.Secret:
		data, found = o.Data[key]
	}
	return data, found, nil
}

// Merge returns over merged onto base: maps merge key by key, anything
// else in over replaces what base has, null included. base is not
// changed.
func Merge(base, over map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		if om, ok := v.(map[string]any); ok {
			if bm, ok := out[k].(map[string]any); ok {
				out[k] = Merge(bm, om)
				continue
			}
		}
		out[k] = v
	}
	return out
}
