// Package cluster gives the controller one explicit entry point to the
// clients of target clusters, GetClient(ctx, cluster), and keeps the
// registry of clusters: Secrets on the hub in KubeVela's format plus the
// implicit "local" cluster, the hub itself.
//
// Usage:
//
//	m, err := cluster.NewManager(hubConfig, hubClient, cluster.ManagerOptions{
//		QPS: 50, Burst: 100, // per target cluster, as on the hub
//	})
//	_ = mgr.Add(m)                          // periodic probes and metrics
//	c, err := m.GetClient(ctx, "prod-eu")   // the cluster is always explicit
//	if cluster.IsUnreachable(err) { ... }   // skip the cluster this pass
//	clusters, err := m.Registry().List(ctx) // input of placement.Resolve
//
// A cluster Secret lives in vela-system, is labelled
// cluster.core.oam.dev/cluster-credential-type (X509Certificate or
// ServiceAccountToken) and holds endpoint, ca.crt and token, or tls.crt and
// tls.key. Its other labels are the cluster's labels, which topology
// policies select by; the annotation cluster.core.oam.dev/cluster-alias is a
// display name. `steward cluster join` writes such Secrets, and so does
// `vela cluster join`.
//
// Implementation notes: for the hub, managed objects are read straight from
// the API server unless their kind was opted into an informer cache, so
// memory does not grow with unrelated objects in the cluster. Target
// clusters are never watched: their clients read and write straight to the
// API server, with the hub's QPS and burst each, a 5s dial timeout and a
// 15s request timeout, so one unreachable cluster costs seconds, never a
// stalled worker. A client is built from its Secret on first use and
// rebuilt when the Secret's resourceVersion changes; the Secret is re-read
// at most every 10s, straight from the hub's API server (no informer on
// Secrets). Manager.Start probes every cluster's /readyz every 30s into
// steward_cluster_connected{cluster} and forgets detached clusters,
// deleting their series.
//
// Files:
//
//	clients.go         Clients, and NewManagedClient: reads of some kinds from a cache, the rest direct
//	cluster.go         Cluster, CredentialType, ErrNotRegistered, the reserved label prefix
//	health.go          KnownDown: a cluster that failed its probe within KnownDownFor is skipped
//	identity.go        Identity and Manager.As: clients that impersonate an Application's ServiceAccount
//	manager.go         Manager and ManagerOptions: GetClient and Connection per cluster, rebuilt when credentials change
//	probe.go           Probe, ProbeAll and the periodic probe; ProbeConfig and IsUnreachable
//	registry.go        Registry: the cluster Secrets on the hub, listed and read
//	registry_cache.go  ListCache: the registry's list kept for ListTTL
//	secret.go          Credentials and the cluster Secret in KubeVela's format: read, validated, written
package cluster
