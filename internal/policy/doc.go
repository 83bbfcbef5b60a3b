// Package policy reads the resource policies of an Application
// (garbage-collect, apply-once, read-only, take-over, shared-resource) and
// answers, for one rendered resource, how Steward must treat it.
//
// Usage:
//
//	rules, err := policy.Parse(app)
//	res := policy.Resource{Component: "web", ComponentType: "webservice", Kind: "Deployment", Name: "web"}
//	if rules.ReadOnly(res) { ... }
//
// Native says which policy types the controller interprets; the others
// render their PolicyDefinition's template (render.RenderPolicies).
// Replication is carried out by internal/placement (Replicate).
//
// Implementation notes: the properties and selectors are KubeVela's, so an
// Application written for KubeVela keeps its meaning. The package is pure:
// it reads the Application's spec only.
//
// Files:
//
//	policy.go       Parse, Rules, Resource and Selector: garbage-collect, apply-once, read-only, take-over, shared-resource; Native
//	unsupported.go  Unsupported: Application-scoped and global policies, refused or reported with a message
package policy
