package inventory

import (
	"slices"
	"testing"

	"github.com/steward-oam/steward/internal/tracker"
)

// The histories the chaos suite found, step by step: the trackers as the
// controller records them after each step, and what garbage collection
// decides then. Component names are the suite's.

// Seed 37959 (watch mode), app beta, incarnation 4: an object kept by an
// onAppDelete rule, dropped from the spec and then its rule removed,
// unpublished, then published at once. It stayed until the Application
// was deleted; it goes once no version renders it and no rule keeps it.
func TestGarbage_Seed37959History(t *testing.T) {
	const (
		web = "beta-web-136"
		cfg = "beta-cm-137"
	)
	rule := gc(cfg, "onAppDelete")
	steps := []struct {
		step       string
		components []string
		policies   string
		trackers   Trackers
		doomed     []string
		left       []string
	}{{
		step:       "156: add component beta-cm-137",
		components: []string{web, cfg},
		trackers:   Trackers{Current: version("v2", 2, cm(web, "nginx"), cm(cfg, "v137")), Older: ptrs(version("v1", 1, cm(web, "nginx")))},
	}, {
		step: "164: garbage-collect onAppDelete for beta-cm-137",
		// The version records it, and root keeps it.
		components: []string{web, cfg},
		policies:   rule,
		trackers: Trackers{Current: version("v3", 3, cm(web, "nginx"), cm(cfg, "v137")), Root: root(cm(cfg, "v137")),
			Older: ptrs(version("v1", 1, cm(web, "nginx")), version("v2", 2, cm(web, "nginx"), cm(cfg, "v137")))},
	}, {
		step:       "179: publishVersion p154",
		components: []string{web, cfg},
		policies:   rule,
		trackers: Trackers{Current: version("pv-p154", 4, cm(web, "nginx"), cm(cfg, "drift-151")), Root: root(cm(cfg, "drift-151")),
			Older: ptrs(version("v2", 2, cm(web, "nginx"), cm(cfg, "v137")), version("v3", 3, cm(web, "nginx"), cm(cfg, "v137")))},
	}, {
		step: "182, 186: remove component beta-cm-137, then its rule (unpublished): p154 still renders it",
		// Only the generation p154 is kept at moves.
		components: []string{web},
		trackers: Trackers{Current: version("pv-p154", 6, cm(web, "nginx"), cm(cfg, "drift-151")), Root: root(cm(cfg, "drift-151")),
			Older: ptrs(version("v2", 2, cm(web, "nginx"), cm(cfg, "v137")), version("v3", 3, cm(web, "nginx"), cm(cfg, "v137")))},
	}, {
		step: "188: publishVersion p160: no version renders it, no rule keeps it",
		// Root keeps the entry without its manifest (it left the spec).
		components: []string{web},
		trackers: Trackers{Current: version("pv-p160", 6, cm(web, "nginx")), Root: root(meta(cm(cfg, "drift-151"))),
			Older: ptrs(version("v3", 3, cm(web, "nginx"), cm(cfg, "v137")), version("pv-p154", 6, cm(web, "nginx"), cm(cfg, "drift-151")))},
		doomed: []string{
			"app.ns.root: beta-cm-137 (left the spec, and no rule keeps it any more)",
			"app.ns.v3: beta-cm-137 (no longer in the current version)",
			"app.ns.pv-p154: beta-cm-137 (no longer in the current version)",
		},
	}, {
		step: "188, had the rule stayed: kept",
		// The same step with the rule still in the spec.
		components: []string{web},
		policies:   rule,
		trackers: Trackers{Current: version("pv-p160", 6, cm(web, "nginx")), Root: root(meta(cm(cfg, "drift-151"))),
			Older: ptrs(version("pv-p154", 6, cm(web, "nginx"), cm(cfg, "drift-151")))},
		left: []string{"app.ns.root: beta-cm-137 (garbage-collect onAppDelete)"},
	}}
	for _, st := range steps {
		t.Run(st.step, func(t *testing.T) {
			got, err := Garbage(st.trackers, keeper(t, st.components, st.policies))
			if err != nil {
				t.Fatal(err)
			}
			sameList(t, "doomed", shown(got.Doomed), st.doomed)
			sameList(t, "left", shown(got.Left), st.left)
			if len(got.Unmarked) > 0 {
				t.Errorf("unmarked: %q", shown(got.Unmarked))
			}
		})
	}
}

// Seed 7483 (timer mode), app gamma, incarnation 4: a rollback to p84 of
// an object an onAppDelete rule keeps gave it the newest version's content
// (the root tracker's), not p84's. Each version records it with its own
// manifest now, and StateKeep applies the live version's.
func TestKept_Seed7483History(t *testing.T) {
	const (
		web = "gamma-web-54"
		cfg = "gamma-cm-37"
	)
	rule := gc(cfg, "onAppDelete")
	steps := []struct {
		step     string
		trackers Trackers
		applied  []string // what StateKeep applies, with data.v
		doomed   []string
	}{{
		step: "81: publishVersion p84 (gamma-cm-37 at v83)",
		trackers: Trackers{Current: version("pv-p84", 10, cm(web, ""), cm(cfg, "v83")), Root: root(cm(cfg, "v83")),
			Older: ptrs(version("v9", 9, cm(web, ""), cm(cfg, "v83")))},
		applied: []string{web + "=", cfg + "=v83"},
	}, {
		step: "86: remove publishVersion (the spec has gamma-cm-37 at v87)",
		trackers: Trackers{Current: version("v12", 12, cm(web, ""), cm(cfg, "v87")), Root: root(cm(cfg, "v87")),
			Older: ptrs(version("v9", 9, cm(web, ""), cm(cfg, "v83")), version("pv-p84", 11, cm(web, ""), cm(cfg, "v83")))},
		applied: []string{web + "=", cfg + "=v87"},
	}, {
		step: "88: publishVersion back to p84: rollback, p84's content",
		// rollBack keeps p84 at the Application's generation: it is live.
		trackers: Trackers{Current: version("pv-p84", 12, cm(web, ""), cm(cfg, "v83")), Root: root(cm(cfg, "v87")),
			Older: ptrs(version("v9", 9, cm(web, ""), cm(cfg, "v83")), version("v12", 12, cm(web, ""), cm(cfg, "v87")))},
		applied: []string{web + "=", cfg + "=v83"},
	}, {
		step: "88, p84 recorded by an earlier Steward: the root tracker's content (the old limitation)",
		trackers: Trackers{Current: earlierVersion("pv-p84", 12, cm(web, "")), Root: root(cm(cfg, "v87")),
			Older: ptrs(version("v12", 12, cm(web, ""), cm(cfg, "v87")))},
		applied: []string{web + "=", cfg + "=v87"},
	}}
	for _, st := range steps {
		t.Run(st.step, func(t *testing.T) {
			current, _ := tracker.Entries(st.trackers.Current)
			rootEntries, _ := tracker.Entries(st.trackers.Root)
			if got := names(Kept(current, rootEntries)); !slices.Equal(got, st.applied) {
				t.Errorf("StateKeep applies %q, want %q", got, st.applied)
			}
			got, err := Garbage(st.trackers, keeper(t, []string{web, cfg}, rule))
			if err != nil {
				t.Fatal(err)
			}
			sameList(t, "doomed", shown(got.Doomed), st.doomed)
		})
	}
}
