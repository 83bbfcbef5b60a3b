// Package cluster gives the controller one explicit entry point to the
// clients of target clusters: GetClient(ctx, cluster).
//
// Usage:
//
//	c, err := clients.GetClient(ctx, "local")
//
// Implementation notes: for now only the hub ("local", or the empty name)
// is served; managed objects are read straight from the API server unless
// their kind was opted into an informer cache, so memory does not grow with
// unrelated objects in the cluster.
package cluster
