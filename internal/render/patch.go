package render

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/steward-oam/steward/internal/cueeval"
)

// Patch strategies of the // +patchStrategy directive, as KubeVela spells
// them.
const (
	strategyRetainKeys     = "retainKeys"
	strategyReplace        = "replace"
	strategyJSONPatch      = "jsonPatch"
	strategyJSONMergePatch = "jsonMergePatch"
)

// patchNode is a patch tree as the evaluator exported it.
type patchNode = cueeval.PatchNode

// applyPatch patches obj in place and returns the result.
func applyPatch(rp *cueeval.Patch, obj map[string]any) (map[string]any, error) {
	m := &merger{}
	switch rp.Strategy {
	case strategyJSONMergePatch:
		out, ok := mergePatch(obj, m.build(rp.Node)).(map[string]any)
		if !ok {
			return nil, fmt.Errorf("json merge patch must be an object")
		}
		return out, nil
	case strategyJSONPatch:
		return applyJSONPatch(obj, m.build(rp.Node))
	}
	out, err := m.merge(obj, true, rp.Node, "")
	if err != nil {
		return nil, err
	}
	res, ok := out.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("patch must be an object")
	}
	return res, nil
}

// merger unifies a patch into an object the way KubeVela's strategic
// unification does: objects merge, scalars must agree, lists merge by
// index unless a +patchKey names the field identifying elements, and
// +patchStrategy=replace / retainKeys let the patch win. As in KubeVela, a
// +patchKey stays in effect for the lists visited after it in the patch.
type merger struct {
	key string
}

func (m *merger) merge(base any, present bool, n *patchNode, path string) (any, error) {
	if !present {
		return m.build(n), nil
	}
	switch n.Kind {
	case cueeval.NodeObject:
		bm, ok := base.(map[string]any)
		if !ok {
			return nil, conflict(path, base, m.build(n))
		}
		for _, f := range n.Fields {
			if f.Key != "" {
				m.key = f.Key
			}
			fpath := joinPath(path, f.Name)
			cur, ok := bm[f.Name]
			var (
				res any
				err error
			)
			switch {
			case f.Node.Kind == cueeval.NodeList && ok:
				bl, isList := cur.([]any)
				if !isList {
					return nil, conflict(fpath, cur, m.build(f.Node))
				}
				res, err = m.mergeList(bl, f.Node, f.Strategy, fpath)
			case f.Strategy == strategyRetainKeys && ok:
				res = m.build(f.Node)
			default:
				res, err = m.merge(cur, ok, f.Node, fpath)
			}
			if err != nil {
				return nil, err
			}
			bm[f.Name] = res
		}
		return bm, nil
	case cueeval.NodeList:
		bl, ok := base.([]any)
		if !ok {
			return nil, conflict(path, base, m.build(n))
		}
		return m.indexMerge(bl, n, path)
	}
	if sc := scalar(n); !reflect.DeepEqual(base, sc) {
		return nil, conflict(path, base, sc)
	}
	return base, nil
}

func (m *merger) mergeList(base []any, n *patchNode, strategy, path string) (any, error) {
	if strategy == strategyReplace {
		return m.build(n), nil
	}
	if m.key != "" {
		if res, ok, err := m.keyedMerge(base, n, m.key, strategy == strategyRetainKeys, path); ok || err != nil {
			return res, err
		}
	}
	return m.indexMerge(base, n, path)
}

// keyedMerge merges elements whose key fields agree and appends the patch's
// other elements. ok is false when an element has no scalar key, in which
// case the caller falls back to merging by index.
func (m *merger) keyedMerge(base []any, n *patchNode, key string, retain bool, path string) (any, bool, error) {
	keyPath := strings.Split(key, ".")
	byKey := map[string]int{}
	for i, e := range n.Elems {
		k, ok := nodeKey(e, keyPath)
		if !ok {
			return nil, false, nil
		}
		byKey[k] = i
	}
	baseKeys := make([]string, len(base))
	for i, b := range base {
		k, ok := dataKey(b, keyPath)
		if !ok {
			return nil, false, nil
		}
		baseKeys[i] = k
	}
	out := make([]any, 0, len(base)+len(n.Elems))
	used := map[int]bool{}
	for i, b := range base {
		j, ok := byKey[baseKeys[i]]
		if !ok || used[j] {
			out = append(out, b)
			continue
		}
		used[j] = true
		res, err := m.merge(b, !retain, n.Elems[j], fmt.Sprintf("%s[%s=%s]", path, key, baseKeys[i]))
		if err != nil {
			return nil, true, err
		}
		out = append(out, res)
	}
	for j, e := range n.Elems {
		k, _ := nodeKey(e, keyPath)
		if !used[j] && byKey[k] == j {
			out = append(out, m.build(e))
		}
	}
	return out, true, nil
}

// indexMerge unifies two lists element by element; the longer list's extra
// elements are kept, and an open patch list's element pattern ([...T])
// applies to the object's remaining elements. A closed empty patch list
// conflicts with a non-empty list, as in KubeVela; an empty object list
// takes the patch's elements (KubeVela would refuse, but an earlier trait
// patching `env: []` must not block the next one from adding to it).
func (m *merger) indexMerge(base []any, n *patchNode, path string) (any, error) {
	if !n.Open && len(base) > 0 && len(n.Elems) == 0 {
		return nil, fmt.Errorf("%s: cannot merge a list of %d items with a list of %d items", path, len(base), len(n.Elems))
	}
	out := make([]any, max(len(base), len(n.Elems)))
	for i := range out {
		switch {
		case i < len(base) && i < len(n.Elems):
			res, err := m.merge(base[i], true, n.Elems[i], fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			out[i] = res
		case i < len(base) && n.Pattern != nil:
			res, err := m.merge(base[i], true, n.Pattern, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			out[i] = res
		case i < len(base):
			out[i] = base[i]
		default:
			out[i] = m.build(n.Elems[i])
		}
	}
	return out, nil
}

// build turns a patch node into plain data, noting the patch keys it passes
// as the merge would.
func (m *merger) build(n *patchNode) any {
	switch n.Kind {
	case cueeval.NodeObject:
		out := make(map[string]any, len(n.Fields))
		for _, f := range n.Fields {
			if f.Key != "" {
				m.key = f.Key
			}
			out[f.Name] = m.build(f.Node)
		}
		return out
	case cueeval.NodeList:
		out := make([]any, len(n.Elems))
		for i, e := range n.Elems {
			out[i] = m.build(e)
		}
		return out
	}
	return scalar(n)
}

// scalar decodes a scalar node's JSON as unstructured data holds it (int64
// and float64 numbers); a node that does not decode is null.
func scalar(n *patchNode) any {
	v, err := decodeJSON(n.Scalar)
	if err != nil {
		return nil
	}
	return v
}

func nodeKey(n *patchNode, path []string) (string, bool) {
	for _, p := range path {
		if n.Kind != cueeval.NodeObject {
			return "", false
		}
		var next *patchNode
		for _, f := range n.Fields {
			if f.Name == p {
				next = f.Node
			}
		}
		if next == nil {
			return "", false
		}
		n = next
	}
	if n.Kind != cueeval.NodeScalar {
		return "", false
	}
	return fmt.Sprintf("%#v", scalar(n)), true
}

func dataKey(x any, path []string) (string, bool) {
	for _, p := range path {
		m, ok := x.(map[string]any)
		if !ok {
			return "", false
		}
		if x, ok = m[p]; !ok {
			return "", false
		}
	}
	switch x.(type) {
	case map[string]any, []any:
		return "", false
	}
	return fmt.Sprintf("%#v", x), true
}

func conflict(path string, base, patch any) error {
	if path == "" {
		path = "patch"
	}
	return fmt.Errorf("%s: conflicting values %s and %s (the patch must agree with the object, or mark the field // +patchStrategy=retainKeys)",
		path, brief(base), brief(patch))
}

// brief prints a value for an error message.
func brief(x any) string {
	switch t := x.(type) {
	case map[string]any:
		return "{...}"
	case []any:
		return fmt.Sprintf("[%d items]", len(t))
	case string:
		return fmt.Sprintf("%q", t)
	}
	return fmt.Sprintf("%v", x)
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
