// Package helm maps Steward's Helm support: a component of type helmchart
// (KubeVela's definition, whose template asks for vela/helm's #Render)
// becomes a chart fetched, rendered client-side and delivered as the
// Application's objects, with Helm's release records written so that
// `helm list` shows it. The package itself holds no code; its
// sub-packages do, one concern each, in the order a chart travels:
//
//	fetch/            the chart archive from a Helm repository, an OCI registry or a URL:
//	                  credentials, caches by digest, bounded downloads (fetch.Fetcher)
//	release/          a helmchart component's release: its #Render parameters, valuesFrom,
//	                  the chart prepared for render (release.Provider), and the release
//	                  record Secrets helm list reads (release.Record, Deployed, Uninstall), a
//	                  release `helm install` made taken over, records and namespaces repaired
//	chart/            a chart archive rendered as `helm template` does (chart.Render),
//	                  and its Chart.yaml read alone (chart.Metadata)
//	chart/charttest/  chart archives, a Helm repository and an OCI registry in memory, for tests
//
// Usage: the controller wires them as the CLI's charts.go does:
//
//	p := &release.Provider{Fetcher: fetch.New(fetch.Options{}), Wait: wait}
//	prepared, err := p.Prepare(ctx, reader, boundary, action.Params, kubeVersion)
//	// cueeval runs prepared.Action through chart.Render inside the sandbox
//	rev, err := release.Record(ctx, targetClient, release.Input{Name: name, Namespace: ns, ...})
//
// docs/helm.md describes the behaviour users see.
package helm
