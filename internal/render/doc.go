// Package render turns an Application and its definitions into Kubernetes
// objects by evaluating the definitions' CUE templates, as KubeVela does.
//
// Usage:
//
//	r := render.NewRenderer()
//	res, err := r.Render(app, defs, render.AppContext{AppRevision: "web-v1"})
//
// The package is pure: it reads no cluster and does no I/O, so the
// controller and `steward render` share one code path.
package render
