package helmchart

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
		var data []byte
		found := false
		switch vf.Kind {
		case "ConfigMap":
			var cm corev1.ConfigMap
			err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: vf.Name}, &cm)
			if err != nil && !apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("%s: %w", what, err)
			}
			if err == nil {
				if _, bin := cm.BinaryData[key]; bin {
					return nil, fmt.Errorf("%s: key %q is in binaryData, which is not read", what, key)
				}
				s, ok := cm.Data[key]
				data, found = []byte(s), ok
			}
		case "Secret":
			var sec corev1.Secret
			err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: vf.Name}, &sec)
			if err != nil && !apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("%s: %w", what, err)
			}
			if err == nil {
				data, found = sec.Data[key]
			}
		default:
			return nil, fmt.Errorf("%s: kind must be ConfigMap or Secret", what)
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
