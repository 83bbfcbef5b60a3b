package measure

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/steward-oam/steward/bench/record"
)

// writeHeapProfile writes a heap profile whose samples allocate, from the
// innermost frame out, through the functions of each stack, with the
// in-use space of each.
func writeHeapProfile(t *testing.T, stacks [][]string, inuse []int64) string {
	t.Helper()
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"},
			{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"}},
		PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:     512 * 1024,
	}
	funcs := map[string]*profile.Function{}
	for i, stack := range stacks {
		var locs []*profile.Location
		for _, name := range stack {
			fn, ok := funcs[name]
			if !ok {
				fn = &profile.Function{ID: uint64(len(funcs) + 1), Name: name, SystemName: name}
				funcs[name] = fn
				p.Function = append(p.Function, fn)
			}
			loc := &profile.Location{ID: uint64(len(p.Location) + 1), Address: uint64(0x1000 + len(p.Location)), Line: []profile.Line{{Function: fn, Line: 1}}}
			p.Location = append(p.Location, loc)
			locs = append(locs, loc)
		}
		// Allocated space is twice what is in use: the summary must read
		// inuse_space, not the first sample type.
		p.Sample = append(p.Sample, &profile.Sample{Location: locs, Value: []int64{1, 2 * inuse[i], 1, inuse[i]}})
	}
	path := filepath.Join(t.TempDir(), "heap.pprof")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestSummariseHeap_SumsInUseSpaceByTheAllocatingPackage(t *testing.T) {
	const mib = 1 << 20
	path := writeHeapProfile(t, [][]string{
		// The runtime allocates for its caller: the informer's store.
		{"runtime.makemap", "runtime.mapassign_faststr", "k8s.io/client-go/tools/cache.(*threadSafeMap).Add", "main.main"},
		{"k8s.io/client-go/tools/cache.(*DeltaFIFO).queueActionLocked", "main.main"},
		// Type arguments hold slashes of their own.
		{"runtime.growslice", "github.com/steward-oam/steward/internal/tracker.(*lru[go.shape.*k8s.io/api/core/v1.Pod]).add", "main.main"},
		// The linker escapes the dots of a package's last element.
		{"gopkg.in/yaml%2ev3.(*parser).node.func1", "main.main"},
		// reflect and sync allocate for their caller too.
		{"reflect.unsafe_New", "reflect.New", "internal/sync.newIndirectNode[...]", "k8s.io/client-go/tools/cache.(*threadSafeMap).Update"},
		// A stack of the runtime only counts as runtime.
		{"runtime.malg", "runtime.newproc1"},
	}, []int64{2 * mib, 1 * mib, 2 * mib, mib / 2, 1 * mib, mib / 2})
	got, err := summariseHeap(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []record.HeapPackage{
		{Package: "k8s.io/client-go/tools/cache", Bytes: 4 * mib, Share: 4.0 / 7},
		{Package: "github.com/steward-oam/steward/internal/tracker", Bytes: 2 * mib, Share: 2.0 / 7},
		{Package: "gopkg.in/yaml.v3", Bytes: mib / 2, Share: 0.5 / 7},
		{Package: "runtime", Bytes: mib / 2, Share: 0.5 / 7},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("summariseHeap =\n%v, want\n%v", got, want)
	}
	if text := record.HeapPackagesText(got, 2); text != "4.0 MiB k8s.io/client-go/tools/cache (57%), 2.0 MiB github.com/steward-oam/steward/internal/tracker (29%), 1.0 MiB elsewhere" {
		t.Errorf("HeapPackagesText = %q", text)
	}
}

func TestSummariseHeap_NamesTheLargestPackagesAndSumsTheRest(t *testing.T) {
	var stacks [][]string
	var inuse []int64
	for i := range heapTopPackages + 3 {
		stacks = append(stacks, []string{fmt.Sprintf("example.com/p%02d.f", i)})
		inuse = append(inuse, int64(100*(heapTopPackages+3-i)))
	}
	got, err := summariseHeap(writeHeapProfile(t, stacks, inuse))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != heapTopPackages+1 || got[0].Package != "example.com/p00" || got[heapTopPackages-1].Package != fmt.Sprintf("example.com/p%02d", heapTopPackages-1) {
		t.Fatalf("summariseHeap = %v", got)
	}
	if rest := got[heapTopPackages]; rest.Package != otherPackages || rest.Bytes != 300+200+100 {
		t.Errorf("the rest = %+v, want %s of 600 bytes", rest, otherPackages)
	}
}

func TestSummariseHeap_RefusesAProfileWithoutInUseSpace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "cpu", Unit: "nanoseconds"}}}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := summariseHeap(path); err == nil {
		t.Errorf("a CPU profile was summarised as a heap profile")
	}
}

func TestPackageOf(t *testing.T) {
	for name, want := range map[string]string{
		"k8s.io/client-go/tools/cache.(*threadSafeMap).Add":                       "k8s.io/client-go/tools/cache",
		"cuelang.org/go/internal/core/adt.(*OpContext).newValue":                  "cuelang.org/go/internal/core/adt",
		"encoding/json.(*decodeState).object":                                     "encoding/json",
		"sync.(*Pool).Get":                                                        "sync",
		"runtime.mallocgc":                                                        "runtime",
		"main.main.func1":                                                         "main",
		"sigs.k8s.io/controller-runtime/pkg/cache.New[...]":                       "sigs.k8s.io/controller-runtime/pkg/cache",
		"gopkg.in/yaml%2ev3.handleErr":                                            "gopkg.in/yaml.v3",
		"github.com/steward-oam/steward/internal/watch.(*Set).add-fm":             "github.com/steward-oam/steward/internal/watch",
		"slices.SortFunc[go.shape.[]*k8s.io/api/core/v1.Pod,go.shape.*uint8]":     "slices",
		"github.com/google/pprof/profile.(*Profile).Write":                        "github.com/google/pprof/profile",
		"go.opentelemetry.io/otel/attribute.computeDistinct":                      "go.opentelemetry.io/otel/attribute",
		"google.golang.org/protobuf/internal/impl.(*MessageInfo).initOnce":        "google.golang.org/protobuf/internal/impl",
		"k8s.io/apimachinery/pkg/runtime.(*Scheme).AddKnownTypeWithName":          "k8s.io/apimachinery/pkg/runtime",
		"github.com/steward-oam/steward/internal/cueeval.(*Evaluator).definition": "github.com/steward-oam/steward/internal/cueeval",
	} {
		if got := packageOf(name); got != want {
			t.Errorf("packageOf(%q) = %q, want %q", name, got, want)
		}
	}
}
