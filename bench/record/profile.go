package record

import (
	"fmt"
	"time"
)

// Scenario names, in the order a run executes them.
const (
	ScenarioMemory  = "memory"
	ScenarioSteady  = "steady"
	ScenarioDrift   = "drift"
	ScenarioFleet   = "fleet"
	ScenarioBigApp  = "bigapp"
	ScenarioManaged = "managed"
	ScenarioSoak    = "soak"
	ScenarioScale   = "scale"
	ScenarioShards  = "shards"
	// ScenarioHelm converges Applications of one Helm chart (helmchart
	// components) served by a loopback Helm repository.
	ScenarioHelm = "helm"
	// ScenarioDefinitions measures definition revisions and admission
	// (issue 33): what a definition change costs while a fleet uses it,
	// and how long `kubectl apply` of a valid Application waits for the
	// webhook.
	ScenarioDefinitions = "definitions"
)

// AllScenarios lists the scenarios a run executes by default, in order.
var AllScenarios = []string{ScenarioMemory, ScenarioSteady, ScenarioDrift, ScenarioFleet, ScenarioBigApp, ScenarioManaged, ScenarioSoak}

// OptInScenarios run only when named (--scenarios): scale takes as long as
// the rest together (make bench-scale); shards compares one controller
// with several shards of it (make bench-shards); helm converges
// Applications of one Helm chart (make bench-helm); definitions measures
// definition changes under autoUpdate and admission (make bench-definitions).
var OptInScenarios = []string{ScenarioScale, ScenarioShards, ScenarioHelm, ScenarioDefinitions}

// Profile sizes the scenarios.
type Profile struct {
	Name    string        `json:"name"`
	Memory  MemoryConfig  `json:"memory"`
	Steady  SteadyConfig  `json:"steady"`
	Drift   DriftConfig   `json:"drift"`
	Fleet   FleetConfig   `json:"fleet"`
	BigApp  BigAppConfig  `json:"bigApp"`
	Managed ManagedConfig `json:"managed"`
	Soak    SoakConfig    `json:"soak"`
	Scale   ScaleConfig   `json:"scale"`
	Shards  ShardsConfig  `json:"shards"`
	Helm    HelmConfig    `json:"helm"`
	// Definitions sizes the definitions scenario.
	Definitions DefinitionsConfig `json:"definitions"`
}

// ShardsConfig sizes the shards scenario: Apps of ResourcesPer objects,
// converged by one controller and by Shards replicas of it, one per shard;
// memory is read as in the scale scenario, Settle after the last app is
// Ready. Timeout bounds each convergence.
type ShardsConfig struct {
	Apps         int      `json:"apps"`
	ResourcesPer int      `json:"resourcesPerApp"`
	Shards       int      `json:"shards"`
	Timeout      Duration `json:"timeout"`
	Settle       Duration `json:"settle"`
	Window       Duration `json:"window"`
	GCs          int      `json:"gcs"`
	// Steady is the window each run's CPU is measured over once settled,
	// at the default re-sync period; Drift the changes made after it.
	Steady Duration         `json:"steady"`
	Drift  FleetDriftConfig `json:"drift"`
	// SkipSingle leaves out the one-controller run: the report compares
	// the replicas with the scale scenario's run of the same controller
	// (same fleet, same client limits), which saves a 10,000-app
	// convergence.
	SkipSingle bool `json:"skipSingle,omitempty"`
}

// ScaleConfig sizes the scale scenario: Apps of ResourcesPer objects,
// created before the controller starts, at its own client QPS and burst.
// Memory is read as in the managed scenario (Settle after the last app is
// Ready); during the restarted controller's pass /metrics is sampled every
// SampleEvery. Timeout bounds the convergence and the pass each.
type ScaleConfig struct {
	Apps         int      `json:"apps"`
	ResourcesPer int      `json:"resourcesPerApp"`
	QPS          float64  `json:"qps"`
	Burst        int      `json:"burst"`
	Timeout      Duration `json:"timeout"`
	Settle       Duration `json:"settle"`
	Window       Duration `json:"window"`
	GCs          int      `json:"gcs"`
	SampleEvery  Duration `json:"sampleEvery"`
	// Steady is the window the settled controller's CPU is measured over,
	// at the default re-sync period (at least one period, so that every
	// app re-syncs in it); Drift the hand changes made after it.
	Steady Duration         `json:"steady"`
	Drift  FleetDriftConfig `json:"drift"`
}

// MemoryConfig sizes the memory-vs-unrelated-objects scenario.
type MemoryConfig struct {
	Apps         int `json:"apps"`
	ResourcesPer int `json:"resourcesPerApp"`
	// Interval is the apps' reconcile-interval: they re-sync while memory
	// is sampled.
	Interval Duration `json:"interval"`
	// Unrelated are the numbers of unrelated Deployments measured at, in
	// increasing order.
	Unrelated []int `json:"unrelated"`
	// WarmUp is the pause between the apps being ready and the first
	// sample.
	WarmUp Duration `json:"warmUp"`
	// Settle is the pause after creating unrelated objects.
	Settle Duration `json:"settle"`
	// Each level is sampled every SampleEvery for at least Window and
	// until the controller has collected garbage GCs times, for no more
	// than MaxWindow. A controller serving pprof is instead made to
	// collect garbage GCs times, Window/GCs apart.
	Window      Duration `json:"window"`
	SampleEvery Duration `json:"sampleEvery"`
	GCs         int      `json:"gcs"`
	MaxWindow   Duration `json:"maxWindow"`
}

// SoakConfig sizes the soak scenario: Apps webservice Applications with
// three traits re-sync every Interval for Duration; heap after a forced
// GC is read every SampleEvery.
type SoakConfig struct {
	Apps        int      `json:"apps"`
	Interval    Duration `json:"interval"`
	Duration    Duration `json:"duration"`
	SampleEvery Duration `json:"sampleEvery"`
}

// SteadyConfig sizes the steady-state API cost scenario.
type SteadyConfig struct {
	Apps         int      `json:"apps"`
	ResourcesPer int      `json:"resourcesPerApp"`
	Interval     Duration `json:"interval"`
	Passes       int      `json:"passes"`
}

// DriftConfig sizes the drift-repair scenario: Deletes deletions of the
// app's Deployment and Edits edits of its spec.replicas, taking turns.
type DriftConfig struct {
	Deletes      int      `json:"deletes"`
	Edits        int      `json:"edits"`
	ResourcesPer int      `json:"resourcesPerApp"`
	Interval     Duration `json:"interval"`
}

// FleetConfig sizes the fleet-convergence scenario.
type FleetConfig struct {
	Apps         int      `json:"apps"`
	ResourcesPer int      `json:"resourcesPerApp"`
	Timeout      Duration `json:"timeout"`
}

// BigAppConfig sizes the big-app scenario.
type BigAppConfig struct {
	Resources int      `json:"resources"`
	Timeout   Duration `json:"timeout"`
}

// ManagedConfig sizes the heap-per-managed-object scenario: apps of
// ResourcesPer objects are added, with the controller running, until it
// manages each of Levels objects; heap in use is read after a forced
// collection (GCs of them, Window/GCs apart; /metrics sampled as in the
// memory scenario for a controller without pprof) Settle after the last
// app of a level is Ready, and once before any app exists.
type ManagedConfig struct {
	ResourcesPer int `json:"resourcesPerApp"`
	// Levels are numbers of managed objects, in increasing order, each a
	// multiple of ResourcesPer.
	Levels []int    `json:"levels"`
	Settle Duration `json:"settle"`
	Window Duration `json:"window"`
	GCs    int      `json:"gcs"`
	// Timeout bounds the wait for the apps of one level to be Ready.
	Timeout Duration `json:"timeout"`
}

// HelmConfig sizes the helm scenario: Apps Applications, each one
// helmchart component of the same chart and version with its own values,
// created before the controller starts.
type HelmConfig struct {
	Apps    int      `json:"apps"`
	Timeout Duration `json:"timeout"`
}

// DefinitionsConfig sizes the definitions scenario: Apps Applications of
// one ComponentDefinition, AutoUpdate of them annotated
// app.oam.dev/autoUpdate; the definition is changed Changes times; then
// Admissions valid Applications are created with server-side dry run.
type DefinitionsConfig struct {
	Apps       int      `json:"apps"`
	AutoUpdate int      `json:"autoUpdate"`
	Changes    int      `json:"changes"`
	Admissions int      `json:"admissions"`
	Timeout    Duration `json:"timeout"`
}

// FleetDriftConfig sizes the drift a fleet scenario inflicts once the
// fleet is delivered: Changes hand edits and deletes of random managed
// objects (random apps, kinds and operations), one every Every, each
// timed until the object is back; Timeout bounds one repair.
type FleetDriftConfig struct {
	Changes int      `json:"changes"`
	Every   Duration `json:"every"`
	Timeout Duration `json:"timeout"`
}

// fullFleetDrift and quickFleetDrift are the hand changes of the scale
// and shards scenarios: a repair may take three default re-sync periods
// (timer mode repairs at the re-sync).
var (
	fullFleetDrift  = FleetDriftConfig{Changes: 100, Every: Duration(time.Second), Timeout: Duration(15 * time.Minute)}
	quickFleetDrift = FleetDriftConfig{Changes: 20, Every: Duration(time.Second), Timeout: Duration(15 * time.Minute)}
)

// FullProfile is `make bench`: the sizes of issue 7.
func FullProfile() Profile {
	return Profile{
		Name: "full",
		Memory: MemoryConfig{Apps: 100, ResourcesPer: 4, Interval: Duration(30 * time.Second), Unrelated: []int{0, 2000, 6000},
			WarmUp: Duration(10 * time.Second), Settle: Duration(10 * time.Second), Window: Duration(15 * time.Second),
			SampleEvery: Duration(100 * time.Millisecond), GCs: 3, MaxWindow: Duration(2 * time.Minute)},
		Steady: SteadyConfig{Apps: 100, ResourcesPer: 4, Interval: Duration(30 * time.Second), Passes: 2},
		Drift:  DriftConfig{Deletes: 10, Edits: 10, ResourcesPer: 4, Interval: Duration(10 * time.Second)},
		Fleet:  FleetConfig{Apps: 1000, ResourcesPer: 8, Timeout: Duration(10 * time.Minute)},
		BigApp: BigAppConfig{Resources: 500, Timeout: Duration(5 * time.Minute)},
		Managed: ManagedConfig{ResourcesPer: 8, Levels: []int{1000, 2000, 4000, 8000}, Settle: Duration(10 * time.Second),
			Window: Duration(10 * time.Second), GCs: 3, Timeout: Duration(10 * time.Minute)},
		Soak: SoakConfig{Apps: 100, Interval: Duration(10 * time.Second), Duration: Duration(10 * time.Minute), SampleEvery: Duration(time.Minute)},
		Scale: ScaleConfig{Apps: 10000, ResourcesPer: 8, QPS: 400, Burst: 600, Timeout: Duration(60 * time.Minute),
			Settle: Duration(30 * time.Second), Window: Duration(10 * time.Second), GCs: 3, SampleEvery: Duration(2 * time.Second),
			Steady: Duration(5 * time.Minute), Drift: fullFleetDrift},
		Shards: ShardsConfig{Apps: 10000, ResourcesPer: 8, Shards: 3, Timeout: Duration(40 * time.Minute),
			Settle: Duration(10 * time.Second), Window: Duration(10 * time.Second), GCs: 3,
			Steady: Duration(5 * time.Minute), Drift: fullFleetDrift, SkipSingle: true},
		Helm:        HelmConfig{Apps: 100, Timeout: Duration(10 * time.Minute)},
		Definitions: DefinitionsConfig{Apps: 2000, AutoUpdate: 50, Changes: 5, Admissions: 300, Timeout: Duration(10 * time.Minute)},
	}
}

// QuickProfile is `make bench-quick`: the same scenarios at small sizes,
// about 25 minutes with the four default controllers.
func QuickProfile() Profile {
	return Profile{
		Name: "quick",
		Memory: MemoryConfig{Apps: 20, ResourcesPer: 4, Interval: Duration(30 * time.Second), Unrelated: []int{0, 500},
			WarmUp: Duration(5 * time.Second), Settle: Duration(2 * time.Second), Window: Duration(5 * time.Second),
			SampleEvery: Duration(100 * time.Millisecond), GCs: 3, MaxWindow: Duration(time.Minute)},
		Steady: SteadyConfig{Apps: 20, ResourcesPer: 4, Interval: Duration(10 * time.Second), Passes: 2},
		Drift:  DriftConfig{Deletes: 3, Edits: 3, ResourcesPer: 4, Interval: Duration(10 * time.Second)},
		Fleet:  FleetConfig{Apps: 100, ResourcesPer: 8, Timeout: Duration(5 * time.Minute)},
		BigApp: BigAppConfig{Resources: 100, Timeout: Duration(2 * time.Minute)},
		Managed: ManagedConfig{ResourcesPer: 8, Levels: []int{400, 800, 1600}, Settle: Duration(5 * time.Second),
			Window: Duration(4 * time.Second), GCs: 2, Timeout: Duration(5 * time.Minute)},
		Soak: SoakConfig{Apps: 100, Interval: Duration(10 * time.Second), Duration: Duration(3 * time.Minute), SampleEvery: Duration(time.Minute)},
		Scale: ScaleConfig{Apps: 500, ResourcesPer: 8, QPS: 400, Burst: 600, Timeout: Duration(10 * time.Minute),
			Settle: Duration(5 * time.Second), Window: Duration(4 * time.Second), GCs: 2, SampleEvery: Duration(time.Second),
			Steady: Duration(5 * time.Minute), Drift: quickFleetDrift},
		Shards: ShardsConfig{Apps: 150, ResourcesPer: 8, Shards: 3, Timeout: Duration(5 * time.Minute),
			Settle: Duration(5 * time.Second), Window: Duration(4 * time.Second), GCs: 2,
			Steady: Duration(5 * time.Minute), Drift: quickFleetDrift},
		Helm:        HelmConfig{Apps: 100, Timeout: Duration(5 * time.Minute)},
		Definitions: DefinitionsConfig{Apps: 200, AutoUpdate: 20, Changes: 3, Admissions: 100, Timeout: Duration(5 * time.Minute)},
	}
}

// ProfileNamed returns the full or quick profile.
func ProfileNamed(name string) (Profile, error) {
	switch name {
	case "full":
		return FullProfile(), nil
	case "quick":
		return QuickProfile(), nil
	}
	return Profile{}, fmt.Errorf("profile %q: want full or quick", name)
}

// Validate reports levels the managed scenario cannot run: each must be
// a whole number of apps, and more than the one before.
func (c ManagedConfig) Validate() error {
	if c.ResourcesPer <= 0 || len(c.Levels) == 0 {
		return fmt.Errorf("managed scenario: want resources per app and at least one level")
	}
	prev := 0
	for _, n := range c.Levels {
		if n <= prev || n%c.ResourcesPer != 0 {
			return fmt.Errorf("managed scenario: levels %v must increase and be multiples of %d objects per app", c.Levels, c.ResourcesPer)
		}
		prev = n
	}
	return nil
}
