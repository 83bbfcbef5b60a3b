// Package definition holds the reconcilers of Steward's definitions:
// each ComponentDefinition, TraitDefinition, PolicyDefinition and
// WorkflowStepDefinition is compiled and its Ready condition says whether
// its template can render; with --definition-revisions every change of a
// definition's spec is recorded in a DefinitionRevision, and a revision
// goes once no Application pins it and the limit is passed.
//
// Usage (internal/controller/manager does this):
//
//	err := definition.Setup(mgr, renderer, recorder, definition.Options{
//		Revisions: true, SystemNamespace: "vela-system", RevisionLimit: 20})
//
// The Application indexes the revisions are read through
// (IndexPinnedRevisions, IndexAutoUpdate) are defined here and registered
// by the Application reconciler, which reads the second.
//
// Files:
//
//	reconciler.go  the definition reconcilers: compile, Ready, Setup
//	revisions.go   DefinitionRevisions: recorded, pinned, pruned; the Application indexes
package definition
