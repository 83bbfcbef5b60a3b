// Package apply creates, patches and deletes objects in one explicit
// cluster, and reports what it changed.
//
// Usage:
//
//	a := apply.Applier{Owner: apply.Owner{Name: "web", Namespace: "default"}}
//	res, err := a.Apply(ctx, c, desired)
//	switch res.Action { case apply.Created, apply.Configured, apply.Unchanged: ... }
//
// Implementation notes: an object no version had (Options.ExpectMissing)
// is created in one request: a server-side apply guarded by a
// resourceVersion no object has (createGuard), refused on an object that
// exists, which is then read as below. Otherwise Apply reads the live
// object once and, by the default ServerSide method, decides without a request whether applying
// would change anything (serverSideDrift: the manifest compared with the
// live object through the kind's schema, and Steward's applied fields,
// from managedFields, with the manifest's); only then is a server-side
// apply sent as FieldManager, first without forcing, then forcing the
// conflicting fields, which are reported. Objects carrying the
// client-side last-applied annotation are upgraded first (csaupgrade). The
// ClientSide method is KubeVela's: a three-way patch against the
// annotation, strategic for kinds client-go knows, JSON merge otherwise,
// skipped when empty. The caller passes the client of the target cluster
// at every call; nothing is hidden in the context.
//
// Files:
//
//	apply.go       Applier, Owner, Options, Method: Apply reads the live object once, then creates, patches or leaves it
//	change.go      Action and Result, the typed change per object; ErrNotOwned and OwnershipError
//	clientside.go  the ClientSide method: KubeVela's three-way patch against the last-applied annotation
//	delete.go      Delete: an object deleted only while it carries this Application's labels, with UID preconditions
//	drift.go       the drift judgement: serverSideDrift, whether a server-side apply would change live, without a request
//	fields.go      keepLiveFields: apply-once paths (spec.a[0].b) kept at their live values
//	normalize.go   normalize: quantities and stringData in the form the API server stores, so they compare equal
//	patched.go     PatchedFields: the dotted paths a client-side patch changes, for drift reports
//	restore.go     Restore: an object put back to its last-applied configuration (read-only and take-over policies)
//	schemas.go     the schemas of the built-in kinds compared so far, each cut from client-go's whole schema
//	serverside.go  the ServerSide method: create, apply, forced conflicts (Conflict), the csaupgrade of client-side objects
//	shared.go      the shared-resource policy: app.oam.dev/shared-by, joining and leaving sharers, Release
package apply
