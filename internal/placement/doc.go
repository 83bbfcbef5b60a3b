// Package placement decides where an Application's components go and in
// what shape: from its topology and override policies and the deploy steps
// of its workflow, and the list of registered clusters, it computes deploy
// steps, each with ordered placements (cluster, namespace) and the override
// policies that shape the components it delivers.
//
// Usage:
//
//	clusters, err := clusterManager.Registry().List(ctx)
//	steps, err := placement.Resolve(app, clusters) // a user error: terminal, condition names the policy
//	for _, step := range steps {
//		comps, err := step.Components(app) // overrides applied
//		for _, p := range step.Placements {
//			// render comps for p.Cluster ("" is the hub), in p.Namespace when set
//		}
//	}
//
// Semantics, KubeVela's unless noted:
//
//   - topology: clusters names clusters (each must be registered; local is
//     always registered); clusterLabelSelector, or its deprecated alias
//     clusterSelector, selects every cluster carrying all its labels ({}
//     selects all, local included); with neither, the hub. namespace
//     replaces the Application's. A topology that selects nothing is an
//     error unless allowEmpty is true. Steward also refuses a policy that
//     sets both clusters and a selector, or unknown fields.
//   - override: see ApplyOverrides. Properties merge as a JSON merge patch,
//     so null deletes a key (KubeVela ignores nulls); a type change keeps
//     the traits (KubeVela drops them).
//   - replication: see Replicate. Applied after the overrides, by the
//     deploy steps that name it (listed or inline); each selected
//     component becomes one copy per key, with ReplicaKey set.
//   - deploy steps (also inside step groups) name policies in
//     properties.policies, in order, plus properties.inlinePolicies; a step
//     without a topology policy delivers to the hub. Without any deploy
//     step there is one implicit step with every topology and override
//     policy (KubeVela generates one step per topology, each with every
//     override: the same placements, without the sequencing).
//
// Implementation notes: the package is pure (no client, no I/O), so every
// rule is table-tested. The hub is returned as the empty cluster name, the
// spelling tracker entries already use, so existing entries keep their keys.
//
// Files:
//
//	inputs.go       WithInputs: the values earlier workflow steps exported, given to the deploy steps that read them
//	override.go     override policies: ApplyOverrides shapes the components of a placement
//	placement.go    Placement, Step and Resolve: the workflow and its policies turned into deploy steps
//	replication.go  replication policies: Replicate turns a step's components into one copy per key
//	topology.go     topology policies: clusters by name or label selector, and their namespace
package placement
