package apply

import (
	"encoding/json"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// keepLiveFields copies each path's live value into desired, or removes the
// field from desired when the live object has none, so that applying
// desired leaves those fields as they are.
func keepLiveFields(desired, live *unstructured.Unstructured, paths []string) {
	for _, p := range paths {
		steps := parsePath(p)
		if len(steps) == 0 {
			continue
		}
		v, ok := lookup(live.Object, steps)
		if ok {
			assign(desired.Object, steps, v)
		} else {
			remove(desired.Object, steps)
		}
	}
}

// step is a map key or a list index.
type step struct {
	key   string
	index int
	isIdx bool
}

// parsePath parses "spec.template.spec.containers[0].image".
func parsePath(p string) []step {
	var out []step
	for _, part := range strings.Split(p, ".") {
		name, rest, _ := strings.Cut(part, "[")
		if name != "" {
			out = append(out, step{key: name})
		}
		for rest != "" {
			idx, after, ok := strings.Cut(rest, "]")
			if !ok {
				return nil
			}
			n, err := strconv.Atoi(idx)
			if err != nil {
				return nil
			}
			out = append(out, step{index: n, isIdx: true})
			rest = strings.TrimPrefix(after, "[")
		}
	}
	return out
}

func lookup(obj any, steps []step) (any, bool) {
	v, ok := lookupRef(obj, steps)
	if !ok {
		return nil, false
	}
	return runtime.DeepCopyJSONValue(v), true
}

func assign(obj map[string]any, steps []step, v any) {
	var cur any = obj
	for i, s := range steps {
		last := i == len(steps)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				c[s.key] = v
				return
			}
			next, ok := c[s.key]
			if !ok {
				if steps[i+1].isIdx {
					return
				}
				next = map[string]any{}
				c[s.key] = next
			}
			cur = next
		case []any:
			if s.index >= len(c) {
				return
			}
			if last {
				c[s.index] = v
				return
			}
			cur = c[s.index]
		default:
			return
		}
	}
}

func remove(obj map[string]any, steps []step) {
	parent, ok := lookupRef(obj, steps[:len(steps)-1])
	if !ok {
		return
	}
	if m, ok := parent.(map[string]any); ok && !steps[len(steps)-1].isIdx {
		delete(m, steps[len(steps)-1].key)
	}
}

// lookupRef is lookup without copying, for in-place edits.
func lookupRef(obj any, steps []step) (any, bool) {
	cur := obj
	for _, s := range steps {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[s.key]
			if !ok || s.isIdx {
				return nil, false
			}
			cur = v
		case []any:
			if !s.isIdx || s.index >= len(c) {
				return nil, false
			}
			cur = c[s.index]
		default:
			return nil, false
		}
	}
	return cur, true
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
