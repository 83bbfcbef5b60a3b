// Package chart renders a Helm chart archive as `helm template` does,
// client side: no cluster is read, .Capabilities are Helm's defaults with
// the target cluster's version, and the result is plain objects in Helm's
// install order, with the chart's CRDs and hooks apart. It runs where
// templates run, in the sandbox's evaluator processes (cueeval carries out
// vela/helm's #Render with it), so a chart template is bounded by the
// same evaluation budget as a CUE template. The controller itself only
// reads a chart's Chart.yaml (Metadata), for the release record.
//
// Usage:
//
//	r, err := chart.Render(archive, values, chart.Options{ReleaseName: "web", Namespace: "prod",
//		KubeVersion: "v1.30.0", IncludeCRDs: true})
//	// r.Objects, r.CRDs, r.Hooks (declared, never run), r.Notes
//	md, err := chart.Metadata(archive) // name, version, appVersion without loading the rest
//
// Files:
//
//	metadata.go  Metadata: the top chart's Chart.yaml, read from the archive alone
//	render.go    Load, Render and RenderChart, Options and Rendered; ClusterScoped, the offline scope of a kind
package chart
