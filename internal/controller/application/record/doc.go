// Package record is what a version records in its ResourceTracker beyond
// the rendered objects' manifests, and what it carries from the version
// before: entries of rendered objects (with their source and the
// policies' say), the entries custom steps and PostDispatch traits
// recorded, the values workflow steps passed to each other, component
// revisions and Helm releases. It reads and builds tracker data only;
// package application records it before anything is applied.
//
// Usage:
//
//	versioned, root, err := record.Entries(app, objs, rules)
//	versioned, err = record.CarryStepEntries(current, versioned)
//	values := record.RunValues(app, current)
//
// Files:
//
//	entries.go      tracker entries of rendered objects, and what the policies say of each
//	carry.go        entries carried into a new version: custom steps' and PostDispatch traits'
//	inputs.go       values passed between workflow steps: recorded outputs, steps rendered again
//	postdispatch.go what PostDispatch traits rendered, and the digest they render again on
//	revisions.go    component revisions: hashed, marked on a first version's tracker, trimmed to the limit
//	helm.go         the Helm releases a tracker records
package record
