// Package order says in what order an Application's objects are applied
// (components after what they dependsOn, Namespaces and CRDs first within
// a component) and deleted (workloads first, Namespaces and CRDs last,
// in reverse dependency order).
//
// Usage:
//
//	deps := order.Dependencies(app)
//	entries = order.ByDependency(entries, deps)
//	doomed = order.ForDeletion(doomed)
//
// Files:
//
//	order.go apply order (dependsOn), delete order (kind classes)
package order
