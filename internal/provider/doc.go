// Package provider carries out the provider actions of KubeVela workflow
// step definitions: `vela/http`, `vela/email`, `vela/config`, `vela/util`
// and `vela/kube`. A step template asks for an action by its provider and
// #do name, with its $params as JSON, and gets its $returns back as JSON.
// Every provider action Steward carries out lives here; the controller
// only supplies what vela/kube needs of the Application (KubeApp).
//
// Usage:
//
//	reg := provider.Defaults(provider.HTTPOptions{Egress: policy}) // http, email, config, util
//	reg = reg.With(provider.Kube(app))                              // app: the controller's KubeApp for one step
//	returns, err := reg.Do(ctx, env, provider.Call{Provider: "kube", Do: "read", Params: params})
//
// Implementation notes: every action holds each object, namespace and
// credential Secret it names to env.Boundary before it reads or sends
// anything, and acts as the Application (env.Client, KubeApp.Client).
// What one action returns is bounded (Env.MaxResultBytes, results.go):
// lists are read page by page and stop at the bound. An action refused
// for good returns a *RefusedError, one not done yet ErrPending.
//
// Files:
//
//	provider.go  Call, Env, Registry, and the errors every action returns
//	results.go   the bound on an action's result; lists read page by page
//	defaults.go  the actions carried out without the controller (Defaults), and which are remote
//	http.go      vela/http: http.do, through the egress policy
//	email.go     vela/email: email.send, through the egress policy
//	config.go    vela/config: KubeVela's config Secrets (create, read, list, delete)
//	kube.go      vela/kube: read, list, delete, apply, apply-in-parallel, patch (KubeApp)
//	util.go      vela/util: util.string, util.log
package provider
