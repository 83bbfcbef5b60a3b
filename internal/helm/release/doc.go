// Package release turns a helmchart component into a Helm release Steward
// delivers: it reads vela/helm #Render's parameters as KubeVela's
// helmchart definition passes them, holds the release namespace, the
// credentials' Secret and every valuesFrom source to the Application's
// namespace boundary before anything is read, merges the values, fetches
// the chart in the background (package fetch) without holding a
// reconcile worker, and hands the chart to the render (package chart
// renders it, in the sandbox). After delivery it writes Helm's own
// release records (Secrets of type helm.sh/release.v1) on the target
// cluster, so `helm list` and `helm history` show the release; records
// someone else wrote are never touched.
//
// Usage:
//
//	p := &release.Provider{Fetcher: fetch.New(fetch.Options{}), Wait: 2 * time.Second}
//	prepared, err := p.Prepare(ctx, appReader, boundary.Boundary{Namespace: app.Namespace}, params, kubeVersion)
//	var rerr *release.Error // rerr.Reason: ReasonFetching (retried), ReasonFetchFailed, ReasonValuesFailed
//	rev, err := release.Record(ctx, target, release.Input{Name: prepared.Release, Namespace: prepared.Namespace, ...})
//	err = release.Deployed(ctx, target, name, namespace, rev, ownerLabels)
//	err = release.Uninstall(ctx, target, name, namespace, ownerLabels)
//
// Files:
//
//	local.go     a chart source that is a path on this machine (the CLI's offline render), packaged as helm package does
//	params.go    Params, Options, ValuesFrom: #Render's parameters with KubeVela's defaults; OutputPrefix, the helmchart definition's chart outputs
//	provider.go  Provider, Prepared and Error: Prepare and Peek, background downloads, the namespace boundary
//	release.go   Input, Record, Deployed, Uninstall and History: Helm's release record Secrets; ErrForeignRelease
//	values.go    Values and Merge: valuesFrom (ConfigMaps, Secrets) merged under the inline values
package release
