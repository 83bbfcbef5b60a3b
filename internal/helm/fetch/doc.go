// Package fetch fetches Helm chart archives for helmchart components:
// from a Helm repository (by name, with an exact version, a semver range or
// latest), from an OCI registry (oci://, by tag, range or latest), or from
// a URL, with the credentials of a Secret in the shapes KubeVela's
// helmchart documents.
//
// Usage:
//
//	f := fetch.New(fetch.Options{Observe: metrics.ChartCache})
//	auth, err := fetch.AuthFromSecret(secret, src) // or nil
//	ttl, err := fetch.ParseTTL(opts.TTL, opts.ImmutableTTL, opts.MutableTTL)
//	got, err := f.Fetch(ctx, fetch.Source{Chart: "redis", RepoURL: url, Version: "^19"}, auth, ttl)
//	// got.Archive is the .tgz, got.Digest its sha256
//
// Implementation notes:
//
//   - Two caches. A resolution (kind, chart, repository, version and a
//     hash of the credentials) maps to a digest for its TTL: an exact
//     semantic version for the immutable TTL, latest, ranges and moving
//     tags (main, dev, ...) for the mutable one, ttl "0" never. Archives are
//     kept once per digest in an LRU bounded by MaxCacheBytes. A repository
//     index or OCI manifest naming a digest already kept is not downloaded
//     again, so versions that resolve to one chart share it.
//   - Credentials are part of the resolution key: an archive fetched with
//     credentials is never served to a fetch without them (KubeVela keyed
//     its cache without them). They are sent only to the repository's own
//     host, never to a chart URL on another host (Helm's default).
//   - Concurrent fetches of one key share a download (singleflight); a
//     download outlives the caller that started it (it is bounded by
//     Options.Timeout), so a render that stopped waiting finds it cached.
//   - Every read is bounded: index.yaml at 32 MiB, an archive at
//     MaxChartBytes (refused by Content-Length before it is read, and cut
//     off past it), an OCI manifest at 4 MiB and its chart layer by the
//     size the manifest declares; OCI content is checked against its
//     digest, and a repository archive against the index's.
//   - Repositories are read with Helm v4's index types (repo/v1: version
//     ranges and latest as `helm install --version`). OCI is pulled with
//     oras-go, the library under Helm's registry client, directly: Helm's
//     client reads no size bound and falls back to the credentials of the
//     process's own ~/.docker/config.json, which must never serve a
//     tenant's fetch.
//   - Errors name the source (never its credentials): unreachable, no
//     matching version, 401/403 refused, too large, not a chart.
//     IsPermanent tells the ones trying again does not change (the
//     source answered: no such chart, version or tag, credentials
//     refused, not a chart, too large; or the source is malformed) from
//     the transient ones (unreachable, timeouts, 5xx, 429, a digest
//     that does not match the index yet).
//
// Files:
//
//	auth.go    Auth and AuthFromSecret: a Secret's credentials in KubeVela's shapes, sent to the repository's host only
//	errors.go  IsPermanent: the failures no retry changes, told from the transient ones
//	fetch.go   Fetcher, Options and Fetched: the resolution and archive caches, singleflight, bounded downloads
//	oci.go     oci:// charts pulled with oras-go: tags, ranges, manifests and layers checked by digest
//	source.go  Source, Kind and TTL: where a chart comes from and how long a resolution is kept
package fetch
