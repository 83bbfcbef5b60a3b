// Package release turns a helmchart component into a Helm release Steward
// delivers: it reads vela/helm #Render's parameters as KubeVela's
// helmchart definition passes them, holds the release namespace, the
// credentials' Secret and every valuesFrom source to the Application's
// namespace boundary before anything is read, merges the values, fetches
// the chart in the background (package fetch) without holding a
// reconcile worker, and hands the chart to the render (package chart
// renders it, in the sandbox). After delivery it writes Helm's own
// release records (Secrets of type helm.sh/release.v1) on the target
// cluster, so `helm list` and `helm history` show the release. A release
// `helm install` made under the same name and namespace is taken over in
// place (inside the Application's boundary, as its identity), its
// history continuing; another Application's is never touched. A record
// deleted or corrupted by hand is found (Check) and written again, and a
// release namespace deleted by hand is created again (EnsureNamespace).
// Failures say whether trying again can help (Permanent), so that the
// workflow ends on a permanent one after KubeVela's retries.
//
// Usage:
//
//	p := &release.Provider{Fetcher: fetch.New(fetch.Options{}), Wait: 2 * time.Second}
//	prepared, err := p.Prepare(ctx, appReader, boundary.Boundary{Namespace: app.Namespace}, params, kubeVersion)
//	var rerr *release.Error // rerr.Reason: ReasonFetching (retried), ReasonFetchFailed, ReasonValuesFailed
//	release.Permanent(err)  // no retry helps: end the workflow after release.MaxRetries
//	rev, err := release.Record(ctx, target, release.Input{Name: prepared.Release, Namespace: prepared.Namespace, Boundary: b, ...})
//	taken, err := release.AdoptObjects(ctx, target, b, name, namespace, objects, ownerLabels)
//	err = release.Deployed(ctx, target, name, namespace, rev, ownerLabels)
//	state, err := release.Check(ctx, target, name, namespace, rev, ownerLabels) // RecordMissing, RecordBroken: render again
//	created, err := release.EnsureNamespace(ctx, target, namespace)
//	err = release.Uninstall(ctx, target, name, namespace, ownerLabels)
//
// Files:
//
//	adopt.go     adopt, AdoptObjects and ManifestObjects: a release `helm install` made, taken over in place (records and objects)
//	failure.go   Permanent, Failures, MaxRetries and RetryAfter: which failures no retry helps, counted, and KubeVela's workflow back-off
//	local.go     a chart source that is a path on this machine (the CLI's offline render), packaged as helm package does
//	params.go    Params, Options, ValuesFrom: #Render's parameters with KubeVela's defaults; OutputPrefix, the helmchart definition's chart outputs
//	provider.go  Provider, Prepared and Error: Prepare and Peek, background downloads, the namespace boundary
//	release.go   Input, Record, Deployed, Uninstall and History: Helm's release record Secrets; ErrForeignRelease
//	repair.go    Check and EnsureNamespace: a record deleted or corrupted by hand, a release namespace deleted
//	values.go    Values and Merge: valuesFrom (ConfigMaps, Secrets) merged under the inline values
package release
