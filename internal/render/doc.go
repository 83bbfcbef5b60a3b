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
// The package is pure: it reads no cluster and does no I/O of its own, so
// the controller and `steward render` share one code path. It evaluates
// no CUE itself either: every evaluation goes to a cueeval.Evaluator,
// which in the controller and the CLI is a sandbox.Pool of bounded
// evaluator processes (delivery.NewRenderer builds one); without
// WithEvaluator it is an in-process cueeval.Local, for tests.
//
// Implementation notes:
//
//   - A definition's template is spec.schematic.cue.template, else the
//     legacy spec.extension.template, as KubeVela reads it (definition.go:
//     ComponentTemplate, TraitTemplate, used by render, health and the
//     definition controller alike).
//   - A definition part (template or status field) goes to the evaluator
//     as a cueeval.Source keyed by kind, namespace, name and part, with a
//     version of UID, resourceVersion and template hash: the evaluator
//     compiles each version once and keeps it (renderer.go: source; the
//     evaluator's cache is cueeval's compile.go).
//   - Evaluation (evaluate.go) sends `context` and `parameter` as JSON and
//     gets back `output`, `outputs`, `patch` and `patchOutputs` as JSON
//     and a patch tree: plain data, nothing of CUE.
//   - An evaluation that hits a limit of the budget, or a render whose
//     objects are more or larger than Limits allow, is an *Error with
//     reason EvaluationBudgetExceeded naming the definition and the limit.
//   - Trait patches (patch.go) are applied in Go to that data, following
//     KubeVela's strategic unification and its comment directives
//     (+patchKey, +patchStrategy=retainKeys|replace|jsonPatch|jsonMergePatch),
//     which CUE keeps as doc comments on the evaluated fields.
//   - Policies whose type Steward does not interpret (policy.Native)
//     render their PolicyDefinition's template on their own
//     (RenderPolicies, policy.go), once per version rather than per
//     placement: KubeVela delivers their output on the hub.
//   - A component copy of a replication policy (ReplicaKey set) sees its
//     key as context.replicaKey, and its objects carry LabelReplicaKey.
//   - objects.go gives objects their default name and namespace and the
//     bookkeeping labels. Every object of `outputs` carries its outputs
//     name in trait.oam.dev/resource and trait.oam.dev/type (the trait
//     type, or AuxiliaryWorkload for the component's own outputs), which
//     is how a recorded manifest maps back to context.outputs.<name>.
//   - health.go and status.go evaluate spec.status as KubeVela does:
//     status.details' fields, then healthPolicy's isHealth, then
//     customStatus's message, each seeing in context.status what the ones
//     before found, each compiled once and cached beside the template (parts of
//     the same cache key), with context.output and context.outputs holding
//     the live objects and parameter the properties with the template's
//     defaults. No healthPolicy means healthy; an object the caller could
//     not read back means unhealthy. KstatusHealth offers kstatus'
//     conventions for kinds whose definition says nothing.
//   - WithCacheObserver reports compile-cache hits and misses, which the
//     controller exports as metrics.
//
// Files:
//
//	context.go     the context.* map templates see, built from AppContext and ClusterVersion
//	definition.go  a definition's template (schematic.cue, else the legacy extension)
//	errors.go      Error, with the reason, component, trait and path that say what to fix; LimitError
//	evaluate.go    one template evaluation: context and parameter in, output, outputs and patches out
//	health.go      ComponentHealth and TraitHealth from spec.status, and KstatusHealth
//	jsonpatch.go   the jsonPatch and jsonMergePatch trait directives
//	objects.go     default names and namespaces, and the bookkeeping labels every object carries
//	patch.go       trait patches applied in Go: KubeVela's strategic unification and its directives
//	policy.go      RenderPolicies: the objects the templates of non-native policies render (output, outputs)
//	render.go      Render: an Application and its definitions to objects, component by component
//	renderer.go    Renderer, Limits and Options: the evaluator, its cache keys, CheckTemplate and CheckStatus
//	status.go      the status input (the live objects, parameter) and its evaluation for health.go
//	step.go        StepSource and EvaluateStep: workflow step templates through the Renderer's evaluator
//	types.go       Definitions, AppContext, ClusterVersion, ActionsError; Result, Component, Auxiliary
package render
