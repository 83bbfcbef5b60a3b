package version

import (
	"runtime/debug"
	"testing"
)

func TestFrom(t *testing.T) {
	vcs := &debug.BuildInfo{
		GoVersion: "go1.26.0",
		Main:      debug.Module{Path: "github.com/steward-oam/steward", Version: "v0.2.1-0.20261202142300-64ef218aaaaa+dirty"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "64ef218aaaaabbbbccccddddeeeeffff00001111"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	for _, tc := range []struct {
		name            string
		version, commit string
		bi              *debug.BuildInfo
		wantVersion     string
		wantCommit      string
		wantModified    bool
	}{{
		name: "stamped by make build wins", version: "v0.3.0-2-g64ef218-dirty", commit: "64ef218", bi: vcs,
		wantVersion: "v0.3.0-2-g64ef218-dirty", wantCommit: "64ef218", wantModified: true,
	}, {
		name: "build info when not stamped", bi: vcs,
		wantVersion: vcs.Main.Version, wantCommit: "64ef218aaaaabbbbccccddddeeeeffff00001111", wantModified: true,
	}, {
		name: "a devel build without VCS says unknown", bi: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}},
		wantVersion: Unknown, wantCommit: Unknown,
	}, {
		name: "no build info at all", wantVersion: Unknown, wantCommit: Unknown,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := from(tc.version, tc.commit, tc.bi)
			if got.Version != tc.wantVersion || got.Commit != tc.wantCommit || got.Modified != tc.wantModified {
				t.Errorf("got %+v, want version %q commit %q modified %v", got, tc.wantVersion, tc.wantCommit, tc.wantModified)
			}
			if got.GoVersion == "" || got.Platform == "" {
				t.Errorf("Go version or platform missing: %+v", got)
			}
		})
	}
}
