package version

import (
	"runtime"
	"runtime/debug"
)

// Set by the linker (-ldflags -X) from `make build`; empty otherwise.
// Unexported so nothing but the linker can change them.
var (
	version string
	commit  string
)

// KubeVela is the KubeVela release whose behaviour Steward carries: the
// version KubeVela's tools see (the chart's kubevelaTools.version) and the
// one app.oam.dev/controller-version-require may name for Steward to
// reconcile an Application.
const KubeVela = "v1.9.13"

// Unknown is reported for a value neither the linker nor the build info
// provides.
const Unknown = "unknown"

// Info describes one build of Steward.
type Info struct {
	// Version is `git describe --tags --always --dirty` at build time, or
	// the main module's version.
	Version string `json:"version"`
	// Commit is the full commit hash the binary was built from.
	Commit string `json:"commit"`
	// Modified is true when the work tree had uncommitted changes; known
	// only from the build info.
	Modified bool `json:"modified,omitempty"`
	// GoVersion is the Go toolchain that built the binary.
	GoVersion string `json:"goVersion"`
	// Platform is GOOS/GOARCH.
	Platform string `json:"platform"`
}

// Get returns the running binary's build.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return from(version, commit, bi)
}

// from prefers the stamped values and fills what is missing from bi.
func from(stampedVersion, stampedCommit string, bi *debug.BuildInfo) Info {
	info := Info{
		Version:   stampedVersion,
		Commit:    stampedCommit,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
	}
	if bi != nil {
		if bi.GoVersion != "" {
			info.GoVersion = bi.GoVersion
		}
		if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			info.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if info.Commit == "" {
					info.Commit = s.Value
				}
			case "vcs.modified":
				info.Modified = s.Value == "true"
			}
		}
	}
	if info.Version == "" {
		info.Version = Unknown
	}
	if info.Commit == "" {
		info.Commit = Unknown
	}
	return info
}
