package cueeval

import (
	"encoding/json"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
)

// Comment directives of a trait's `patch`, as KubeVela spells them.
const (
	TagPatchKey      = "patchKey"
	TagPatchStrategy = "patchStrategy"
)

// Kinds of patch node.
const (
	NodeScalar = "scalar"
	NodeObject = "object"
	NodeList   = "list"
)

// Patch is a whole `patch` (or one `patchOutputs` entry). Strategy is
// the // +patchStrategy directive on the field itself (jsonPatch or
// jsonMergePatch); otherwise the patch merges strategically.
type Patch struct {
	Strategy string     `json:"strategy,omitempty"`
	Node     *PatchNode `json:"node"`
}

// PatchNode is a concrete patch value with the directives of its fields,
// read from the CUE value's doc comments (which follow fields through
// references, embeddings and comprehensions).
type PatchNode struct {
	Kind string `json:"kind"`
	// Scalar is the JSON of a scalar node.
	Scalar json.RawMessage `json:"scalar,omitempty"`
	Fields []PatchField    `json:"fields,omitempty"`
	Elems  []*PatchNode    `json:"elems,omitempty"`
	// Open marks a list that admits more elements ([a, ...T]); Pattern is
	// T, applied to every element of the object's list, when concrete.
	Open    bool       `json:"open,omitempty"`
	Pattern *PatchNode `json:"pattern,omitempty"`
}

// PatchField is one field of an object node.
type PatchField struct {
	Name     string     `json:"name"`
	Key      string     `json:"key,omitempty"`      // +patchKey
	Strategy string     `json:"strategy,omitempty"` // +patchStrategy
	Node     *PatchNode `json:"node"`
}

func newPatch(v cue.Value) (*Patch, error) {
	n, err := buildPatchNode(v)
	if err != nil {
		return nil, err
	}
	return &Patch{Strategy: directives(v.Doc())[TagPatchStrategy], Node: n}, nil
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

func buildPatchNode(v cue.Value) (*PatchNode, error) {
	if err := v.Err(); err != nil {
		return nil, err
	}
	switch v.IncompleteKind() {
	case cue.StructKind:
		n := &PatchNode{Kind: NodeObject}
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
			n.Fields = append(n.Fields, PatchField{
				Name: it.Selector().Unquoted(), Key: tags[TagPatchKey],
				Strategy: tags[TagPatchStrategy], Node: child,
			})
		}
		return n, nil
	case cue.ListKind:
		n := &PatchNode{Kind: NodeList, Elems: []*PatchNode{}}
		it, err := v.List()
		if err != nil {
			return nil, err
		}
		for it.Next() {
			child, err := buildPatchNode(it.Value())
			if err != nil {
				return nil, err
			}
			n.Elems = append(n.Elems, child)
		}
		if pv := v.LookupPath(cue.MakePath(cue.AnyIndex)); pv.Exists() {
			n.Open = true
			if pv.IncompleteKind() == cue.StructKind {
				// A pattern that is not concrete only constrains; skip it.
				n.Pattern, _ = buildPatchNode(pv)
			}
		}
		return n, nil
	}
	if err := v.Validate(cue.Concrete(true)); err != nil {
		return nil, err
	}
	b, err := v.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return &PatchNode{Kind: NodeScalar, Scalar: b}, nil
}

// bytes is about the size of the patch's data: its scalars and names.
func (p *Patch) bytes() int {
	if p == nil {
		return 0
	}
	return p.Node.bytes()
}

func (n *PatchNode) bytes() int {
	if n == nil {
		return 0
	}
	size := len(n.Scalar) + n.Pattern.bytes()
	for _, f := range n.Fields {
		size += len(f.Name) + f.Node.bytes()
	}
	for _, e := range n.Elems {
		size += e.bytes()
	}
	return size
}
