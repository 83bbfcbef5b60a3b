package record

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/render"
	"github.com/steward-oam/steward/internal/tracker"
)

// PostRender is how one placement's PostDispatch traits last rendered:
// the error when they could not.
type PostRender struct {
	Err string `json:"e,omitempty"`
}

func PostRenders(rt *v1beta1.ResourceTracker) map[string]PostRender {
	out := map[string]PostRender{}
	tracker.DecodeMark(rt, tracker.AnnotationPostDispatch, &out)
	return out
}

// PostDispatchTraits returns the types of a component's traits of stage
// PostDispatch.
func PostDispatchTraits(comp v1beta1.ApplicationComponent, defs render.Definitions) map[string]bool {
	var out map[string]bool
	for _, t := range comp.Traits {
		if d := defs.Traits[t.Type]; d != nil && d.Spec.Stage == v1beta1.TraitStagePostDispatch {
			if out == nil {
				out = map[string]bool{}
			}
			out[t.Type] = true
		}
	}
	return out
}

// PostDigest identifies what a placement's PostDispatch traits render
// from: the component (its properties and traits), the definitions and
// the live workload's resourceVersion.
func PostDigest(comp v1beta1.ApplicationComponent, defs render.Definitions, post map[string]bool, rv string) string {
	h := sha256.New()
	b, _ := json.Marshal(comp)
	h.Write(b)
	gens := []string{}
	if d := defs.Components[comp.Type]; d != nil {
		gens = append(gens, d.Namespace+"/"+d.Name+"@"+d.ResourceVersion)
	}
	for _, t := range comp.Traits {
		if d := defs.Traits[t.Type]; d != nil {
			gens = append(gens, d.Namespace+"/"+d.Name+"@"+d.ResourceVersion)
		}
	}
	b, _ = json.Marshal(gens)
	h.Write(b)
	h.Write([]byte(rv))
	return hex.EncodeToString(h.Sum(nil))[:16]
}
