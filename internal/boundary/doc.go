// Package boundary is the one namespace boundary every door a tenant can
// reach goes through: the objects a render produces, and every read,
// write, delete and credential lookup a workflow step's provider action
// or a Helm chart source asks for. With --no-cross-namespace-objects
// (Boundary.Confined) an Application reaches only its own namespace, and
// cluster-scoped objects only when it acts as a ServiceAccount, whose RBAC
// then decides. Without the flag nothing is refused here: the
// Application's identity (Steward's own, or its ServiceAccount) decides,
// as the API server authorises it.
//
// Usage:
//
//	b := boundary.Boundary{Namespace: app.Namespace, Confined: opts.NoCrossNamespaceObjects, Impersonating: !id.IsZero()}
//	if err := b.CheckNamespace("Secret vela-system/token (auth.secretRef)", "vela-system"); err != nil {
//		return err // *boundary.Error, reason CrossNamespaceObject; nothing was read
//	}
//
// Implementation notes:
//
//   - The check is pure and runs before any request: a refused read is
//     never sent, so no Secret outside the boundary is ever read.
//   - Errors carry the condition reason (v1beta1.ReasonCrossNamespaceObject
//     or v1beta1.ReasonClusterScopedObject) and name the flag, so a step's
//     status and a render's condition say the same thing.
//
// Files:
//
//	boundary.go   Boundary, its checks, and Error
package boundary
