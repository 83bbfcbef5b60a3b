// Package version says which build of Steward is running: the version and
// commit `make build` stamps into the binary, else what the Go toolchain
// recorded (the module version, vcs.revision and vcs.modified).
//
// Usage:
//
//	v := version.Get()
//	log.Info("Starting Steward", "version", v.Version, "commit", v.Commit)
//
// Implementation notes: the stamped values are the only package variables,
// and only the linker writes them:
//
//	go build -ldflags "-X github.com/steward-oam/steward/internal/version.version=v0.3.0 \
//		-X github.com/steward-oam/steward/internal/version.commit=$(git rev-parse HEAD)"
//
// A binary built without them (go install, go run, a test) still reports
// something useful, because `go build` embeds the VCS state of the work
// tree it builds from.
//
// Files:
//
//	version.go  Info and Get: the stamped version and commit, else the Go build info
package version
