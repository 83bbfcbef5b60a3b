package report

// apprevisionsSection is the ApplicationRevision storage section. Its
// figures are not a stewardbench scenario's: they are what
// internal/apprevision's TestStorage measures (a pure computation, no
// control plane), copied here so that a regenerated page keeps them.
// Re-measure with the command in the text and update both together.
func apprevisionsSection() string {
	return `## ApplicationRevision storage

1,500 Applications × 10 revisions (issue 48; KubeVela's users report this fleet's LIST of
ApplicationRevisions timing out, kubevela #5050 and #5353). Each Application is the corpus's
` + "`web-full`" + ` webservice with the ` + "`scaler`" + `, ` + "`gateway`" + `, ` + "`labels`" + ` and ` + "`expose`" + ` traits, and each revision records the
five definitions it used as KubeVela ships them (../shared/compat/definitions); every revision changes
the image tag and the replica count, and carries a one-step workflow status. Bytes are the JSON of each
revision as the API server returns it (uid, resourceVersion, creation time, status; no managedFields,
which both shapes would add), and of one LIST of all 15,000. KubeVela's shape is the same object
uncompressed, KubeVela's default (its compression is the alpha feature gates
` + "`GzipApplicationRevision`" + ` and ` + "`ZstdApplicationRevision`" + `).

| Shape | bytes per revision (mean) | largest | LIST of all | LIST against KubeVela's |
| --- | --- | --- | --- | --- |
| KubeVela's shape, uncompressed (its default) | 32101 | 32106 | 459.2 MiB | 1.000 |
| every revision whole, gzip | 9742 | 9747 | 139.4 MiB | 0.304 |
| every revision whole, zstd | 10613 | 10622 | 151.8 MiB | 0.331 |
| **Steward**: gzip, superseded revisions without definitions | 2821 | 9746 | 40.4 MiB | **0.088** |

Compression alone gives a third: the definitions' CUE templates are most of a revision and
compress about fivefold, and the data is base64 (KubeVela's encoding, so its clients decode it).
Steward therefore keeps the definitions in the live revision only: when a version is superseded,
its revision keeps the Application's spec, metadata and status (what ` + "`vela revision list`" + `,
` + "`vela workflow rollback`" + ` and ` + "`vela up --revision`" + ` read) and names the definitions it dropped in
` + "`steward.oam.dev/definitions-dropped`" + ` (docs/revisions.md). That is under a tenth of KubeVela's
bytes, per revision and per LIST.

Reproduce (about two minutes, no cluster):

` + "```sh" + `
STEWARD_APPREV_STORAGE=1 go test ./internal/apprevision -run TestStorage -v
go test ./internal/apprevision -run '^$' -bench Storage -benchmem   # bytes and cost of one revision
` + "```" + `

`
}
