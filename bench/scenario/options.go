package scenario

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/steward-oam/steward/bench/record"
)

// Options configure a benchmark run.
type Options struct {
	// Controllers are measured in every scenario, one after the other,
	// each on a fresh control plane.
	Controllers []record.Controller
	// BigAppVariants are extra controllers measured in the big-app
	// scenario only, e.g. Steward with tracker compression.
	BigAppVariants []record.Controller
	Profile        record.Profile
	// Scenarios to run; empty runs all.
	Scenarios []string
	// BinDir holds kube-apiserver and etcd; CRDDir the CRDs to install.
	BinDir string
	CRDDir string
	// DefinitionDirs are applied to vela-system before each scenario.
	DefinitionDirs []string
	// QPS and Burst fill the {qps} and {burst} placeholders of every
	// controller command line; QPS is also the fleet's lower bound.
	QPS   float64
	Burst int
	// LogDir receives one log file per controller process.
	LogDir string
	// Progress receives one line per measurement; nil discards.
	Progress io.Writer
}

// Validate reports options a run cannot start with.
func (o Options) Validate() error {
	if len(o.Controllers) == 0 {
		return fmt.Errorf("no controller to measure")
	}
	for _, s := range o.Scenarios {
		if !slices.Contains(record.AllScenarios, s) && !slices.Contains(record.OptInScenarios, s) {
			return fmt.Errorf("scenario %q: want one of %v or %v", s, record.AllScenarios, record.OptInScenarios)
		}
	}
	if o.runs(record.ScenarioManaged) {
		if err := o.Profile.Managed.Validate(); err != nil {
			return err
		}
	}
	if o.QPS <= 0 || o.Burst <= 0 {
		return fmt.Errorf("qps and burst must be positive")
	}
	seen := map[string]bool{}
	for _, c := range append(slices.Clone(o.Controllers), o.BigAppVariants...) {
		if seen[c.Name] {
			return fmt.Errorf("controller name %q used twice", c.Name)
		}
		seen[c.Name] = true
	}
	return nil
}

func (o Options) runs(scenario string) bool {
	if len(o.Scenarios) == 0 {
		return slices.Contains(record.AllScenarios, scenario)
	}
	return slices.Contains(o.Scenarios, scenario)
}

// forcedGCs is the sampling of heap and RSS at one moment: gcs forced
// collections over window (or /metrics sampled as in the memory scenario
// for a controller without pprof). The managed, scale and shards
// scenarios read memory this way.
func forcedGCs(window record.Duration, gcs int) record.MemoryConfig {
	return record.MemoryConfig{Window: window, GCs: gcs, SampleEvery: record.Duration(100 * time.Millisecond), MaxWindow: record.Duration(2 * time.Minute)}
}
