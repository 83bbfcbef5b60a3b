// Package delivery renders what a version of an Application delivers: the
// objects of every placement of its deploy steps, each with the step's
// overrides, the placement's namespace, the kind's scope in the target
// cluster and Steward's ownership labels, components in dependency order.
// The controller records these objects in its trackers; `steward render`
// and `steward diff` show them, so a preview is what would be deployed.
//
// Usage:
//
//	steps, err := placement.Resolve(app, clusters)
//	objs, err := delivery.Objects(app, steps, delivery.Input{
//		Renderer: render.NewRenderer(), Definitions: resolve,
//		Context: render.AppContext{AppRevision: delivery.RevisionName(app, gen)},
//		Namespaced: scopeOf})
//
// The objects of policies whose templates render them
// (render.RenderPolicies) come first, on the hub in the Application's
// namespace, whatever the steps place: KubeVela applies them before its
// workflow runs.
//
// Implementation notes: definitions are resolved per placement from the
// Application with the step's overrides applied (components may change
// type), but always in the Application's own namespace. Errors say what
// failed through their type: *PolicyError (a step's policies are wrong),
// *DefinitionsError (definitions could not be read), *ScopeError (a kind's
// scope could not be learnt); anything else is a render error the user
// must fix in the Application.
//
// Files:
//
//	delivery.go  Object, Input and Objects: every placement of the deploy steps rendered, scoped and labelled
//	renderer.go  NewRenderer: a Renderer over a sandbox.Pool with the budget; Placeable
package delivery
