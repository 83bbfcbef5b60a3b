package apply

import (
	"sync"
	_ "unsafe" // go:linkname, for the schema text below
	"weak"

	"k8s.io/apimachinery/pkg/runtime/schema"
	_ "k8s.io/client-go/applyconfigurations" // links the schema text below
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// builtinSchema is client-go's schema of every built-in kind (the one
// applyconfigurations.NewTypeConverter parses). That function keeps the
// whole parse for the life of the process (959 types; the soak of 100
// apps measured 0.8 MiB of live heap and 1.9 MiB in use after GC more
// with it), where a Deployment reaches 123 types and a ConfigMap 8. The text is
// read here instead (client-go exports no other way to it; a rename fails
// the build, not a pass), and only the types of the kinds seen are kept
// (kindTypes): 0.1 MiB for a Deployment, Service, ConfigMap, Secret and
// Ingress.
//
//go:linkname builtinSchema k8s.io/client-go/applyconfigurations/internal.schemaYAML
var builtinSchema typed.YAMLObject

// kindTypes holds, for each built-in kind compared so far, its type with
// the schema cut down to the types it reaches. A kind's first comparison
// parses the whole schema (unless a parse is still in memory) and keeps
// only that.
type kindTypes struct {
	mu    sync.Mutex
	types map[schema.GroupVersionKind]*typed.ParseableType
	// all is the last whole parse, until the garbage collector takes it:
	// the kinds of a first pass come together and share it.
	all weak.Pointer[typed.Parser]
}

var builtinTypes = &kindTypes{types: map[schema.GroupVersionKind]*typed.ParseableType{}}

// typeOf returns the type of a kind client-go knows, nil for any other
// (or when the schema cannot be read: the kind is then deduced).
func (k *kindTypes) typeOf(gvk schema.GroupVersionKind) *typed.ParseableType {
	if !clientgoscheme.Scheme.Recognizes(gvk) {
		return nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if t, ok := k.types[gvk]; ok {
		return t
	}
	var t *typed.ParseableType
	if name, err := clientgoscheme.Scheme.ToOpenAPIDefinitionName(gvk); err == nil {
		if all := k.whole(); all != nil {
			if types, ok := reachable(&all.Schema, name); ok {
				p := &typed.Parser{}
				p.Schema.Types = types
				pt := p.Type(name)
				t = &pt
			}
		}
	}
	k.types[gvk] = t
	return t
}

// whole returns the whole schema, parsed again when the last parse is
// gone; nil if it cannot be parsed.
func (k *kindTypes) whole() *typed.Parser {
	if p := k.all.Value(); p != nil {
		return p
	}
	p, err := typed.NewParser(builtinSchema)
	if err != nil {
		return nil
	}
	k.all = weak.Make(p)
	return p
}

// reachable returns the types root reaches in s, root first; false when
// root is not one of them.
func reachable(s *smdschema.Schema, root string) ([]smdschema.TypeDef, bool) {
	if _, ok := s.FindNamedType(root); !ok {
		return nil, false
	}
	seen := map[string]bool{}
	var out []smdschema.TypeDef
	var visitRef func(smdschema.TypeRef)
	var visitAtom func(smdschema.Atom)
	visitRef = func(r smdschema.TypeRef) {
		if r.NamedType != nil {
			name := *r.NamedType
			if seen[name] {
				return
			}
			seen[name] = true
			if td, ok := s.FindNamedType(name); ok {
				out = append(out, smdschema.TypeDef{Name: name, Atom: td.Atom})
				visitAtom(td.Atom)
			}
			return
		}
		visitAtom(r.Inlined)
	}
	visitAtom = func(a smdschema.Atom) {
		if a.List != nil {
			visitRef(a.List.ElementType)
		}
		if a.Map != nil {
			for _, f := range a.Map.Fields {
				visitRef(f.Type)
			}
			visitRef(a.Map.ElementType)
		}
	}
	visitRef(smdschema.TypeRef{NamedType: &root})
	return out, true
}
