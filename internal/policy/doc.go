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
// Implementation notes: the properties and selectors are KubeVela's, so an
// Application written for KubeVela keeps its meaning. The package is pure:
// it reads the Application's spec only.
//
// Files:
//
//	policy.go       Parse, Rules, Resource and Selector: garbage-collect, apply-once, read-only, take-over, shared-resource
//	unsupported.go  Unsupported: policy types Steward does not implement, refused with a message
package policy
