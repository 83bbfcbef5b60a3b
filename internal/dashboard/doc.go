// Package dashboard serves Steward's read-only web UI: the list of
// Applications, an Application's conditions, components, tracked objects
// with their live state (drift), workflow, versions and events, and the
// clusters. Pages are rendered in Go with html/template (everything shown
// from the cluster is escaped) and work without JavaScript; a small
// embedded script keeps an open page up to date through server-sent
// events, pushed when the Application informer, or a watch of the
// Application's objects, sees a change.
//
// Usage:
//
//	err := dashboard.Run(ctx, cfg, hub, dashboard.RunOptions{Address: "127.0.0.1:8090", Namespace: ns}) // steward dashboard
//	err = dashboard.AddToManager(mgr, cfg, addr, allowRemote, clusterSecretNamespace)                // --dashboard-addr
//
// The server only reads: every route is GET or HEAD, anything else is 405,
// unknown paths are 404. It sends a strict Content-Security-Policy and
// answers only requests addressed to the host it was started on, so a
// loopback dashboard cannot be reached by DNS rebinding.
//
// `steward dashboard` runs it with the user's kubeconfig (RBAC decides what
// they see); the controller can serve it with its own identity
// (--dashboard-addr).
//
// Files:
//
//	list.go       the list page: one row per Application, sorted, filtered and paged
//	live.go       live updates: a broker of page subscriptions and the server-sent-events stream
//	objects.go    objectWatch: metadata-only watches of an open page's objects, per cluster and kind
//	pages.go      the Application and cluster pages, from readmodel.Inspect and readmodel.Clusters
//	run.go        Run (steward dashboard) and AddToManager (--dashboard-addr): the cache and clients it reads with
//	server.go     Server and Options: routes (GET and HEAD only), host check, Content-Security-Policy
//	templates.go  the html/template functions the embedded pages (assets/) use
package dashboard
