package render

import (
	"fmt"
	"reflect"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
)

// Comment directives of a trait's `patch`, as KubeVela spells them.
const (
	tagPatchKey      = "patchKey"
	tagPatchStrategy = "patchStrategy"

	strategyRetainKeys     = "retainKeys"
	strategyReplace        = "replace"
	strategyJSONPatch      = "jsonPatch"
	strategyJSONMergePatch = "jsonMergePatch"
)

type nodeKind int

const (
	scalarNode nodeKind = iota
	objectNode
	listNode
)

// patchNode is a concrete patch value with the directives of its fields,
// read from the CUE value's doc comments (which follow fields through
// references, embeddings and comprehensions).
type patchNode struct {
	kind   nodeKind
	scalar any
	fields []patchField
	elems  []*patchNode
	// open marks a list that admits more elements ([a, ...T]); pattern is
	// T, applied to every element of the object's list, when concrete.
	open    bool
	pattern *patchNode
}

// patchField is one field of an object patch node.
type patchField struct {
	name     string
	key      string // +patchKey
	strategy string // +patchStrategy
	node     *patchNode
}

// rootPatch is a whole `patch` (or one `patchOutputs` entry). strategy is
// jsonPatch or jsonMergePatch when the field is marked so; otherwise the
// patch merges strategically.
type rootPatch struct {
	strategy string
	node     *patchNode
}

func newRootPatch(v cue.Value) (*rootPatch, error) {
	n, err := buildPatchNode(v)
	if err != nil {
		return nil, err
	}
	return &rootPatch{strategy: directives(v.Doc())[tagPatchStrategy], node: n}, nil
}

// directives reads `// +key=value` lines of doc comments.
func directives(groups []*ast.CommentGroup) map[string]string {
	var out map[string]string
	for _, g := range groups {
		for _, c := range g.List {
			line := strings.TrimSpace(strings.TrimPrefix(c.Text, "//"))
			rest, ok := strings.CutPrefix(line, "+")
			if !ok {
				continue
			}
			k, val, ok := strings.Cut(rest, "=")
			val = strings.TrimSpace(val)
			if !ok || len(strings.Fields(val)) != 1 {
				continue
			}
			if out == nil {
				out = map[string]string{}
			}
			out[strings.TrimSpace(k)] = val
		}
	}
	return out
}

func buildPatchNode(v cue.Value) (*patchNode, error) {
	if err := v.Err(); err != nil {
		return nil, err
	}
	switch v.IncompleteKind() {
	case cue.StructKind:
		n := &patchNode{kind: objectNode}
		it, err := v.Fields()
		if err != nil {
			return nil, err
		}
		for it.Next() {
			child, err := buildPatchNode(it.Value())
			if err != nil {
				return nil, err
			}
			tags := directives(it.Value().Doc())
			n.fields = append(n.fields, patchField{
				name: it.Selector().Unquoted(), key: tags[tagPatchKey],
				strategy: tags[tagPatchStrategy], node: child,
			})
		}
		return n, nil
	case cue.ListKind:
		n := &patchNode{kind: listNode, elems: []*patchNode{}}
		it, err := v.List()
		if err != nil {
			return nil, err
		}
		for it.Next() {
			child, err := buildPatchNode(it.Value())
			if err != nil {
				return nil, err
			}
			n.elems = append(n.elems, child)
		}
		if pv := v.LookupPath(cue.MakePath(cue.AnyIndex)); pv.Exists() {
			n.open = true
			if pv.IncompleteKind() == cue.StructKind {
				// A pattern that is not concrete only constrains; skip it.
				n.pattern, _ = buildPatchNode(pv)
			}
		}
		return n, nil
	}
	if err := v.Validate(cue.Concrete(true)); err != nil {
		return nil, err
	}
	s, err := exportJSON(v)
	if err != nil {
		return nil, err
	}
	return &patchNode{kind: scalarNode, scalar: s}, nil
}

// apply patches obj in place and returns the result.
func (rp *rootPatch) apply(obj map[string]any) (map[string]any, error) {
	m := &merger{}
	switch rp.strategy {
	case strategyJSONMergePatch:
		out, ok := mergePatch(obj, m.build(rp.node)).(map[string]any)
		if !ok {
			return nil, fmt.Errorf("json merge patch must be an object")
		}
		return out, nil
	case strategyJSONPatch:
		return applyJSONPatch(obj, m.build(rp.node))
	}
	out, err := m.merge(obj, true, rp.node, "")
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
	switch n.kind {
	case objectNode:
		bm, ok := base.(map[string]any)
		if !ok {
			return nil, conflict(path, base, m.build(n))
		}
		for _, f := range n.fields {
			if f.key != "" {
				m.key = f.key
			}
			fpath := joinPath(path, f.name)
			cur, ok := bm[f.name]
			var (
				res any
				err error
			)
			switch {
			case f.node.kind == listNode && ok:
				bl, isList := cur.([]any)
				if !isList {
					return nil, conflict(fpath, cur, m.build(f.node))
				}
				res, err = m.mergeList(bl, f.node, f.strategy, fpath)
			case f.strategy == strategyRetainKeys && ok:
				res = m.build(f.node)
			default:
				res, err = m.merge(cur, ok, f.node, fpath)
			}
			if err != nil {
				return nil, err
			}
			bm[f.name] = res
		}
		return bm, nil
	case listNode:
		bl, ok := base.([]any)
		if !ok {
			return nil, conflict(path, base, m.build(n))
		}
		return m.indexMerge(bl, n, path)
	}
	if !reflect.DeepEqual(base, n.scalar) {
		return nil, conflict(path, base, n.scalar)
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
	for i, e := range n.elems {
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
	out := make([]any, 0, len(base)+len(n.elems))
	used := map[int]bool{}
	for i, b := range base {
		j, ok := byKey[baseKeys[i]]
		if !ok || used[j] {
			out = append(out, b)
			continue
		}
		used[j] = true
		res, err := m.merge(b, !retain, n.elems[j], fmt.Sprintf("%s[%s=%s]", path, key, baseKeys[i]))
		if err != nil {
			return nil, true, err
		}
		out = append(out, res)
	}
	for j, e := range n.elems {
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
	if !n.open && len(base) > 0 && len(n.elems) == 0 {
		return nil, fmt.Errorf("%s: cannot merge a list of %d items with a list of %d items", path, len(base), len(n.elems))
	}
	out := make([]any, max(len(base), len(n.elems)))
	for i := range out {
		switch {
		case i < len(base) && i < len(n.elems):
			res, err := m.merge(base[i], true, n.elems[i], fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			out[i] = res
		case i < len(base) && n.pattern != nil:
			res, err := m.merge(base[i], true, n.pattern, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			out[i] = res
		case i < len(base):
			out[i] = base[i]
		default:
			out[i] = m.build(n.elems[i])
		}
	}
	return out, nil
}

// build turns a patch node into plain data, noting the patch keys it passes
// as the merge would.
func (m *merger) build(n *patchNode) any {
	switch n.kind {
	case objectNode:
		out := make(map[string]any, len(n.fields))
		for _, f := range n.fields {
			if f.key != "" {
				m.key = f.key
			}
			out[f.name] = m.build(f.node)
		}
		return out
	case listNode:
		out := make([]any, len(n.elems))
		for i, e := range n.elems {
			out[i] = m.build(e)
		}
		return out
	}
	return n.scalar
}

func nodeKey(n *patchNode, path []string) (string, bool) {
	for _, p := range path {
		if n.kind != objectNode {
			return "", false
		}
		var next *patchNode
		for _, f := range n.fields {
			if f.name == p {
				next = f.node
			}
		}
		if next == nil {
			return "", false
		}
		n = next
	}
	if n.kind != scalarNode {
		return "", false
	}
	return fmt.Sprintf("%#v", n.scalar), true
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
