package status

import "github.com/steward-oam/steward/api/v1beta1"

// DropKubeVelaConditions removes KubeVela's condition types from conds and
// returns the types removed.
func DropKubeVelaConditions(conds *[]v1beta1.Condition) []string {
	var dropped []string
	for _, t := range kubevelaConditionTypes {
		if v1beta1.RemoveCondition(conds, t) {
			dropped = append(dropped, t)
		}
	}
	return dropped
}

// kubevelaConditionTypes are the condition types KubeVela writes on an
// Application that Steward does not ("Ready" it shares): Steward drops
// them from the status, since nothing would ever update them again.
var kubevelaConditionTypes = []string{"Parsed", "Revision", "Policy", "Render", "Workflow", "StateKeep", "Synced"}
