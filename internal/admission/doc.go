// Package admission is Steward's validating admission webhook: it refuses,
// at `kubectl apply`, an Application that can never render (an unknown
// component, trait, policy or step type, properties that do not fit a
// definition's parameter, a workflow that does not check) and a definition
// whose CUE does not compile, with a message naming the field.
//
// The checks are the controller's own: definitions are resolved by
// definition.Resolver, the Application is placed by placement and rendered
// by delivery.Objects with the controller's render.Renderer, and
// definitions are compiled by Renderer.CheckTemplate, so the webhook and
// the controller never disagree. What only the cluster can say (a chart to
// fetch, a cluster to reach, an evaluator too busy) is admitted with a
// warning and left to the controller, which reports it as a condition.
//
// Usage:
//
//	checker := &admission.Checker{Resolver: resolver, Renderer: renderer}
//	admission.Register(mgr.GetWebhookServer(), checker, timeout)
//
// A check that does not answer within the timeout admits the object with
// a warning, but runs on (to 4×timeout) so that its evaluation ends within
// its own budget. At most Options.MaxChecks (DefaultMaxChecks, 8) run at
// once, shared by both paths; a request that finds them all running is
// admitted at once with a warning saying so, never queued, and left to the
// controller like a timed-out one.
//
// Beside the render path, the rules of KubeVela's own webhook are kept
// with its messages (kubevela.go, outputs.go, params.go): duplicate
// component names, autoUpdate with publishVersion, spec.version with the
// revision-name annotation, definition outputs naming a kind the cluster
// does not have (read from the template's syntax, never evaluated),
// workload.type against workload.definition, and `component "x": missing
// parameters: a.b.c`. A WorkflowStepDefinition Steward cannot run is
// admitted with a warning (KubeVela compiles none at admission).
//
// Configuration builds the ValidatingWebhookConfiguration (failurePolicy
// Ignore: a Steward that is down never blocks the cluster);
// MutatingConfiguration the mutating one, which fills a
// ComponentDefinition's workload.type (DefaultWorkload) as KubeVela's does;
// MirrorCABundle copies the validating configuration's CA into it.
//
// Files:
//
//	check.go     Checker: an Application placed and rendered, a definition compiled, as the controller would
//	config.go    Configuration and EnsureConfiguration: the ValidatingWebhookConfiguration (failurePolicy Ignore)
//	handler.go   Register and Options: the handler, its timeout and the bound on checks running at once
//	kubevela.go  KubeVela's rules on names, annotations and a ComponentDefinition's workload
//	mutate.go    DefaultWorkload, its handler and the MutatingWebhookConfiguration, MirrorCABundle
//	outputs.go   the kinds a template's output and outputs name, checked against the cluster's REST mapper
//	params.go    required parameters of a component's definition and those an Application supplies
package admission
