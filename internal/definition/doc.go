// Package definition finds the definitions an Application renders with,
// as KubeVela does: in the Application's namespace first, then in the
// system namespace.
//
// Usage:
//
//	defs, err := definition.Resolve(ctx, reader, app, "vela-system")
//	res, err := renderer.Render(app, defs, actx)
//
// A type with no definition is left out of the result; render reports it
// with a clear error.
//
// Files:
//
//	resolve.go   Resolver, Resolve and ResolveSteps: the Application's namespace, then the system one; Fingerprint
//	revision.go  definition revisions: Pin (type@v2), CheckPin, NewestInRange (autoUpdate), SpecHash, NamedRevision
package definition
