// Package apply creates, patches and deletes objects in one explicit
// cluster, and reports what it changed.
//
// Usage:
//
//	a := apply.Applier{Owner: apply.Owner{Name: "web", Namespace: "default"}}
//	res, err := a.Apply(ctx, c, desired)
//	switch res.Action { case apply.Created, apply.Configured, apply.Unchanged: ... }
//
// Implementation notes: Apply reads the live object once and, by the
// default ServerSide method, decides without a request whether applying
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
package apply
