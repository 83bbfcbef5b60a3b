package apply

import (
	"encoding/json"
	"sort"
	"strings"
)

// maxReportedFields bounds how many fields a drift report names.
const maxReportedFields = 8

// PatchedFields lists the fields a patch changes, as dotted paths
// ("spec.replicas", "metadata.labels.tier"), for drift reports. Patch
// directives and the last-applied annotation are left out.
func PatchedFields(patch []byte) []string {
	if len(patch) == 0 {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(patch, &m); err != nil {
		return nil
	}
	var out []string
	walkPatch(m, "", &out)
	sort.Strings(out)
	if len(out) > maxReportedFields {
		out = append(out[:maxReportedFields], "…")
	}
	return out
}

func walkPatch(m map[string]any, prefix string, out *[]string) {
	for k, v := range m {
		if strings.HasPrefix(k, "$") || k == "app.oam.dev/last-applied-configuration" {
			continue
		}
		path := k
		if prefix != "" {
			path = prefix + "." + k
		}
		if child, ok := v.(map[string]any); ok && len(child) > 0 {
			walkPatch(child, path, out)
			continue
		}
		*out = append(*out, path)
	}
}
