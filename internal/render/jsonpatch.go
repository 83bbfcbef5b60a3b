package render

import (
	"encoding/json"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

// mergePatch applies an RFC 7386 JSON merge patch: objects merge
// recursively, null deletes a key, anything else replaces.
func mergePatch(target, patch any) any {
	pm, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	tm, ok := target.(map[string]any)
	if !ok {
		tm = map[string]any{}
	}
	for k, v := range pm {
		if v == nil {
			delete(tm, k)
			continue
		}
		tm[k] = mergePatch(tm[k], v)
	}
	return tm
}

// applyJSONPatch applies the RFC 6902 operations of a patch marked
// +patchStrategy=jsonPatch, which KubeVela reads from `operations`.
func applyJSONPatch(obj map[string]any, patch any) (map[string]any, error) {
	pm, ok := patch.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("json patch: want an object with operations")
	}
	ops, err := json.Marshal(pm["operations"])
	if err != nil {
		return nil, fmt.Errorf("json patch: %w", err)
	}
	decoded, err := jsonpatch.DecodePatch(ops)
	if err != nil {
		return nil, fmt.Errorf("json patch: %w", err)
	}
	doc, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("json patch: %w", err)
	}
	out, err := decoded.Apply(doc)
	if err != nil {
		return nil, fmt.Errorf("json patch: %w", err)
	}
	res, err := decodeJSON(out)
	if err != nil {
		return nil, fmt.Errorf("json patch: %w", err)
	}
	m, ok := res.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("json patch: result is not an object")
	}
	return m, nil
}
