// Package dashboard serves Steward's read-only web UI: the list of
// Applications, an Application's conditions, components, tracked objects
// with their live state (drift), workflow, versions and events, and the
// clusters. Pages are rendered in Go with html/template (everything shown
// from the cluster is escaped) and work without JavaScript; a small
// embedded script keeps an open page up to date through server-sent
// events, pushed when the Application informer, or a watch of the
// Application's objects, sees a change.
//
// The server only reads: every route is GET or HEAD, anything else is 405,
// unknown paths are 404. It sends a strict Content-Security-Policy and
// answers only requests addressed to the host it was started on, so a
// loopback dashboard cannot be reached by DNS rebinding.
//
// `steward dashboard` runs it with the user's kubeconfig (RBAC decides what
// they see); the controller can serve it with its own identity
// (--dashboard-addr).
package dashboard
