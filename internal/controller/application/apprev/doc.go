// Package apprev keeps an Application's ApplicationRevisions for the
// reconciler's passes: the live version's revision written (or taken up
// again on a rollback) and its tracker labelled app.oam.dev/appRevision,
// the superseded revision thinned, those past --application-revision-limit
// deleted, the workflow's outcome recorded, and all of them deleted with
// the Application. What a revision holds and what goes is decided in
// internal/apprevision; this package reads and writes the objects.
//
// Usage (the reconciler does this):
//
//	k := &apprev.Keeper{On: opts.ApplicationRevisions, Client: c, Reader: apiReader, Resolver: resolver, Limit: opts.RevisionLimit}
//	kind.Revision = k.NameFor(ctx, s, kind) // renderAndRecord, before it records a new tracker
//	err := k.Record(ctx, s)       // a phase, after renderAndRecord
//	k.Outcome(ctx, s, before)     // once the status is computed
//	err = k.Delete(ctx, s.App)    // when the Application is deleted
//
// Implementation notes: revisions are never cached (a cache of every
// revision is what makes KubeVela's LISTs heavy); they are listed from the
// API server only when the live version changes (once per pass, shared by
// NameFor and Record; a new Application's first version is named without
// a list, and its create checks the name), and a revision's status is written only when the
// Application's phase, workflow or live version moved in the pass, over
// the revision the pass wrote when it wrote one. A revision owned by
// another Application is never written.
//
// Files:
//
//	apprev.go  Keeper: Record (what is written, taken up, thinned and trimmed), DeleteWith, Outcome and Delete; whose revisions are written or deleted
//	names.go   the naming of a live version's revision: NameFor, the first version's name, the create that checks a name, the tracker's label
package apprev
