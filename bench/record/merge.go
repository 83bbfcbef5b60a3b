package record

import "slices"

// mergeControllers lists the controllers of both runs: prev's in its
// order, as cur ran them where cur ran one of the same name, then those
// only cur ran. Kept scenarios name controllers cur may not have run.
func mergeControllers(prev, cur []Controller) []Controller {
	out := slices.Clone(prev)
	for _, c := range cur {
		if i := slices.IndexFunc(out, func(p Controller) bool { return p.Name == c.Name }); i >= 0 {
			out[i] = c
		} else {
			out = append(out, c)
		}
	}
	return out
}

// Merge returns cur with the scenarios it did not run (ran lists those it
// did; empty means all) taken from prev, and the run each kept scenario
// was measured in recorded in Earlier: prev's, or the earlier run prev
// itself kept it from.
func Merge(prev, cur *Results, ran []string) *Results {
	if len(ran) == 0 {
		return cur
	}
	out := *cur
	kept := EarlierRun{Profile: prev.Profile.Name, Started: prev.Started, Commit: prev.Host.Commit, Note: prev.Note}
	fromEarlier := func(name string) bool {
		for _, e := range prev.Earlier {
			if slices.Contains(e.Scenarios, name) {
				return true
			}
		}
		return false
	}
	keptAny := false
	keep := func(name string, has bool, copyFn func()) {
		if !slices.Contains(ran, name) && has {
			copyFn()
			keptAny = true
			if !fromEarlier(name) {
				kept.Scenarios = append(kept.Scenarios, name)
			}
		}
	}
	keep(ScenarioMemory, len(prev.Memory) > 0, func() { out.Memory, out.Profile.Memory = prev.Memory, prev.Profile.Memory })
	keep(ScenarioSteady, len(prev.Steady) > 0, func() { out.Steady, out.Profile.Steady = prev.Steady, prev.Profile.Steady })
	keep(ScenarioDrift, len(prev.Drift) > 0, func() { out.Drift, out.Profile.Drift = prev.Drift, prev.Profile.Drift })
	keep(ScenarioFleet, len(prev.Fleet) > 0, func() { out.Fleet, out.Profile.Fleet = prev.Fleet, prev.Profile.Fleet })
	keep(ScenarioBigApp, len(prev.BigApp) > 0, func() {
		out.BigApp, out.Profile.BigApp, out.Variants = prev.BigApp, prev.Profile.BigApp, prev.Variants
	})
	keep(ScenarioManaged, len(prev.Managed) > 0, func() { out.Managed, out.Profile.Managed = prev.Managed, prev.Profile.Managed })
	keep(ScenarioScale, len(prev.Scale) > 0, func() { out.Scale, out.Profile.Scale = prev.Scale, prev.Profile.Scale })
	keep(ScenarioShards, len(prev.Shards) > 0, func() { out.Shards, out.Profile.Shards = prev.Shards, prev.Profile.Shards })
	keep(ScenarioHelm, len(prev.Helm) > 0, func() { out.Helm, out.Profile.Helm = prev.Helm, prev.Profile.Helm })
	keep(ScenarioDefinitions, len(prev.Definitions) > 0, func() {
		out.Definitions, out.Profile.Definitions = prev.Definitions, prev.Profile.Definitions
	})
	keep(ScenarioSoak, len(prev.Soak) > 0, func() { out.Soak, out.Profile.Soak, out.SoakBefore = prev.Soak, prev.Profile.Soak, prev.SoakBefore })
	if !keptAny {
		return cur
	}
	// The CPU of the scenarios kept comes with them.
	out.CPU = slices.Clone(cur.CPU)
	for _, c := range prev.CPU {
		if !slices.Contains(ran, c.Scenario) {
			out.CPU = append(out.CPU, c)
		}
	}
	out.Controllers = mergeControllers(prev.Controllers, cur.Controllers)
	out.Earlier = nil
	for _, e := range prev.Earlier { // earlier runs of scenarios still kept
		e.Scenarios = slices.DeleteFunc(slices.Clone(e.Scenarios), func(s string) bool { return slices.Contains(ran, s) })
		if len(e.Scenarios) > 0 {
			out.Earlier = append(out.Earlier, e)
		}
	}
	if len(kept.Scenarios) > 0 {
		out.Earlier = append(out.Earlier, kept)
	}
	return &out
}
