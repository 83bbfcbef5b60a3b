package placement

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/policy"
)

// replicationProperties are a replication policy's properties, KubeVela's.
type replicationProperties struct {
	// Keys: one copy of each selected component per key.
	Keys []string `json:"keys"`
	// Selector names the components to replicate.
	Selector []string `json:"selector,omitempty"`
}

// parseReplication reads a replication policy; unknown fields are an
// error, as in KubeVela.
func parseReplication(p v1beta1.AppPolicy) (replicationProperties, error) {
	var props replicationProperties
	if p.Properties == nil || len(p.Properties.Raw) == 0 {
		return props, nil
	}
	dec := json.NewDecoder(bytes.NewReader(p.Properties.Raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&props); err != nil {
		return props, fmt.Errorf("policy %q (%s): properties: %w", p.Name, policy.TypeReplication, err)
	}
	return props, nil
}

// Replicate returns comps with the replication policies applied, as
// KubeVela's deploy step applies them after topology and override: each
// component a policy selects is replaced by one copy per key, with
// ReplicaKey set to the key (context.replicaKey in its templates, and the
// app.oam.dev/replicaKey label on what it renders); the copies come after
// the components no policy selects, which stay as they are. Names are
// unchanged: templates tell the copies apart by context.replicaKey. A
// policy that selects no component is an error naming it.
func Replicate(comps []v1beta1.ApplicationComponent, policies []v1beta1.AppPolicy) ([]v1beta1.ApplicationComponent, error) {
	if len(policies) == 0 {
		return comps, nil
	}
	replaced := map[string]bool{}
	var copies []v1beta1.ApplicationComponent
	for _, p := range policies {
		props, err := parseReplication(p)
		if err != nil {
			return nil, err
		}
		var selected []v1beta1.ApplicationComponent
		for _, c := range comps {
			if slices.Contains(props.Selector, c.Name) {
				selected = append(selected, c)
			}
		}
		if len(selected) == 0 {
			return nil, fmt.Errorf("policy %q (%s): no component selected to replicate (selector %v names none of the step's components)", p.Name, policy.TypeReplication, props.Selector)
		}
		for _, c := range selected {
			replaced[c.Name] = true
			for _, key := range props.Keys {
				cp := *c.DeepCopy()
				cp.ReplicaKey = key
				copies = append(copies, cp)
			}
		}
	}
	out := make([]v1beta1.ApplicationComponent, 0, len(comps)+len(copies))
	for _, c := range comps {
		if !replaced[c.Name] {
			out = append(out, c)
		}
	}
	return append(out, copies...), nil
}
