// Package render turns an Application and its definitions into Kubernetes
// objects by evaluating the definitions' CUE templates, as KubeVela does.
//
// Usage:
//
//	r := render.NewRenderer()
//	res, err := r.Render(app, defs, render.AppContext{AppRevision: "web-v1"})
//	var rerr *render.Error
//	if errors.As(err, &rerr) {
//		// rerr.Reason, rerr.Component, rerr.Trait, rerr.Path say what to fix
//	}
//
// Health of a component or trait comes from its definition's spec.status,
// evaluated against the live objects the caller already read:
//
//	h, err := r.ComponentHealth(def, comp, actx, app, liveWorkload, liveOutputs)
//	// h.Healthy, h.Message, h.Details fill status.services[]
//
// The package is pure: it reads no cluster and does no I/O, so the
// controller and `steward render` share one code path.
//
// Implementation notes:
//
//   - Each definition's template is parsed and compiled once into its own
//     CUE context (compile.go) and cached by kind, namespace, name and
//     part in a bounded LRU (k8s.io/utils/lru); the entry is replaced when
//     the UID, resourceVersion or template hash changes. CUE values are
//     not safe for concurrent evaluation, so each cached template has a
//     mutex; different definitions render in parallel.
//   - Evaluation (evaluate.go) fills `context` and `parameter` with JSON
//     compiled into the template's context as an expression (BuildExpr),
//     checks `parameter`, `errs`, and exports `output`, `outputs`, `patch`
//     and `patchOutputs` as plain Go data. Nothing CUE leaves the
//     evaluation, and nothing of it stays reachable afterwards: unlike
//     CompileBytes, BuildExpr does not register the compiled data with
//     the context's runtime, so a long-lived compiled template does not
//     grow with the renders and health checks it serves
//     (TestRenderer_RetainsNothingPerEvaluation guards this).
//   - Trait patches (patch.go) are applied in Go to that data, following
//     KubeVela's strategic unification and its comment directives
//     (+patchKey, +patchStrategy=retainKeys|replace|jsonPatch|jsonMergePatch),
//     which CUE keeps as doc comments on the evaluated fields.
//   - objects.go gives objects their default name and namespace and the
//     bookkeeping labels. Every object of `outputs` carries its outputs
//     name in trait.oam.dev/resource and trait.oam.dev/type (the trait
//     type, or AuxiliaryWorkload for the component's own outputs), which
//     is how a recorded manifest maps back to context.outputs.<name>.
//   - health.go and status.go evaluate spec.status as KubeVela does:
//     healthPolicy's isHealth, customStatus's message and status.details'
//     fields, each compiled once and cached beside the template (parts of
//     the same cache key), with context.output and context.outputs holding
//     the live objects and parameter the properties with the template's
//     defaults. No healthPolicy means healthy; an object the caller could
//     not read back means unhealthy. KstatusHealth offers kstatus'
//     conventions for kinds whose definition says nothing.
//   - WithCacheObserver reports compile-cache hits and misses, which the
//     controller exports as metrics.
package render
