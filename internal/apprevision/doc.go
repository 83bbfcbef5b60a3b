// Package apprevision makes ApplicationRevisions, KubeVela's record of
// each version of an Application (its spec and the definitions it used,
// and how its workflow ended), and stores them compressed: what `vela
// revision list`, `vela live-diff`, `vela workflow rollback` and `vela up
// --revision` read. It is pure: it builds, encodes and decides, and the
// Application reconciler reads and writes the objects.
//
// Usage:
//
//	n := apprevision.Next(app.Status.LatestRevision, existing)
//	rev, err := apprevision.Build(app, apprevision.Definitions{Components: cds, Traits: tds}, n)
//	err = apprevision.Encode(rev, v1beta1.CompressionGzip)
//	changed, err := apprevision.Thin(previous, v1beta1.CompressionGzip)
//	fields, err := apprevision.Decode(rev)
//	apprevision.OutcomeOf(app, rev.Name, metav1.Now()).Apply(rev)
//	for _, name := range apprevision.Trim(existing, live, tracked, limit) { ... }
//
// Implementation notes: names are <app>-v<N> with N counted per
// Application (KubeVela's CLI reads N back from the name); the labels
// are KubeVela's (app.oam.dev/name and app.oam.dev/app-revision-hash),
// and the compressed data is KubeVela's CompressedText encoding (the
// base64 of the gzip or zstd of the fields' JSON), written with the
// trackers' codecs. Only the live revision keeps the definitions: Thin
// drops them from a superseded one (they are nine tenths of its bytes) and
// Refill puts them back when a rollback makes it live again.
//
// Files:
//
//	build.go    Definitions, Build, Hash, NameOf, NumberOf and Refill: a revision from an Application and its definitions
//	encode.go   Encode, Decode and Decoded: the fields stored compressed or as they are; Thin: a superseded revision without definitions
//	limit.go    Sorted, Beyond (the revisions past the limit), Next (the next number), ForVersion (a publishVersion's revision)
//	outcome.go  OutcomeOf and Outcome.Apply: succeeded or failed, from the Application's workflow
package apprevision
