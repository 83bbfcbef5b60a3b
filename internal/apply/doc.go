// Package apply creates, patches and deletes objects in one explicit
// cluster, and reports what it changed.
//
// Usage:
//
//	a := apply.Applier{Owner: apply.Owner{Name: "web", Namespace: "default"}}
//	res, err := a.Apply(ctx, c, desired)
//	switch res.Action { case apply.Created, apply.Configured, apply.Unchanged: ... }
//
// Implementation notes: Apply reads the live object once, creates it when
// missing and otherwise computes a client-side three-way patch between the
// last configuration Steward applied (kept in an annotation), the desired
// object and the live object, as `kubectl apply` does: a strategic merge
// patch for kinds client-go knows, a JSON merge patch for custom resources.
// An empty patch is not sent. The caller passes the client of the target
// cluster at every call; nothing is hidden in the context.
package apply
