package measure

import (
	"fmt"
	"os"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/steward-oam/steward/bench/record"
)

// profileParts names the parts a sample is counted in: the first part,
// in this order, with a function of its stack whose name holds one of the
// part's substrings. The order puts the specific before the general: a
// tracker decoded during health evaluation counts as tracker decoding.
// The reconciler is matched by its names before and after package
// application's split (ApplicationReconciler, application.Reconciler), so
// that older profiles still read.
var profileParts = []struct {
	name  string
	funcs []string
}{
	{"tracker decoding (decompress, unmarshal entries and manifests)", []string{"internal/tracker.decodeCompressed", "internal/tracker.Manifest", "internal/tracker.Decode"}},
	{"health evaluation (definitions, fingerprints, CUE)", []string{"ApplicationReconciler).evaluateHealth", "application.(*Reconciler).evaluateHealth"}},
	{"status (compute, compare, write)", []string{"ApplicationReconciler).patchStatus", "ApplicationReconciler).endPass", "application.(*Reconciler).patchStatus", "application.(*Reconciler).endPass"}},
	{"StateKeep (digest, watch cache, apply)", []string{"ApplicationReconciler).keepState", "application.(*Reconciler).keepState"}},
	{"reconcile, other (trackers from cache, finalizer, plan)", []string{"ApplicationReconciler).Reconcile", "application.(*Reconciler).Reconcile"}},
	{"other Steward controllers", []string{"github.com/steward-oam/steward/internal/"}},
	{"work queue, logging and metrics of controller-runtime", []string{"sigs.k8s.io/controller-runtime/pkg/internal/controller", "controller-runtime/pkg/controller/priorityqueue", "go-logr"}},
	{"API requests over the wire (HTTP/2, TLS)", []string{"golang.org/x/net/http2", "crypto/tls", "net/http.(*persistConn)"}},
	{"informers (list, watch, decode, store)", []string{"k8s.io/client-go/tools/cache", "k8s.io/apimachinery/pkg/watch", "k8s.io/client-go/rest/watch", "k8s.io/client-go/rest"}},
	{"metrics and pprof served", []string{"prometheus", "net/http.(*conn).serve"}},
	{"garbage collection (background)", []string{"runtime.gcBgMarkWorker", "runtime.bgsweep", "runtime.bgscavenge"}},
	{"Go scheduler, timers and network polling", []string{"runtime.schedule", "runtime.findRunnable", "runtime.netpoll", "runtime.mcall", "runtime.sysmon"}},
}

// otherPart counts what no part names.
const otherPart = "other"

// summariseProfile splits the CPU profile at path into parts, largest
// first.
func summariseProfile(path string) ([]record.ProfilePart, error) {
	byPart, total, err := sumProfile(path, "CPU", "cpu", partOf)
	if err != nil {
		return nil, err
	}
	var out []record.ProfilePart
	if total == 0 {
		return out, nil
	}
	for _, part := range append(partNames(), otherPart) {
		if v := byPart[part]; v > 0 {
			out = append(out, record.ProfilePart{Part: part, Share: v / total, Seconds: v / 1e9})
		}
	}
	// Largest first; the order of profileParts breaks ties.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Share > out[j-1].Share; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out, nil
}

func partNames() []string {
	var out []string
	for _, p := range profileParts {
		out = append(out, p.name)
	}
	return out
}

func partOf(s *profile.Sample) string {
	for _, part := range profileParts {
		for _, loc := range s.Location {
			for _, line := range loc.Line {
				if line.Function == nil {
					continue
				}
				for _, fn := range part.funcs {
					if strings.Contains(line.Function.Name, fn) {
						return part.name
					}
				}
			}
		}
	}
	return otherPart
}

// FillProfiles summarises again the steady windows' CPU profiles and the
// soak's heap profiles of res that are still on disk, so that a change to
// the parts shows in a regenerated report; a profile no longer there keeps
// its summary.
func FillProfiles(res *record.Results) {
	fill := func(w *record.SteadyWindow) {
		if w.Profile == "" {
			return
		}
		if parts, err := summariseProfile(w.Profile); err == nil {
			w.Parts = parts
		}
	}
	for i := range res.Scale {
		fill(&res.Scale[i].Steady)
	}
	for i := range res.Shards {
		fill(&res.Shards[i].SingleSteady)
		for j := range res.Shards[i].Replicas {
			fill(&res.Shards[i].Replicas[j].Steady)
		}
	}
	fillHeapProfiles(res)
}

// sumProfile sums the samples of type sampleType (cpu, inuse_space) of the
// profile at path (a kind of profile, for errors) by the key each sample
// is counted under, and returns the sums and their total.
func sumProfile(path, kind, sampleType string, key func(*profile.Sample) string) (map[string]float64, float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return nil, 0, fmt.Errorf("%s profile %s: %w", kind, path, err)
	}
	index := -1
	for i, st := range p.SampleType {
		if st.Type == sampleType {
			index = i
		}
	}
	if index < 0 {
		return nil, 0, fmt.Errorf("%s profile %s: no %s samples", kind, path, sampleType)
	}
	total := 0.0
	sums := map[string]float64{}
	for _, s := range p.Sample {
		v := float64(s.Value[index])
		total += v
		sums[key(s)] += v
	}
	return sums, total, nil
}
