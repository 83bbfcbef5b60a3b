package measure

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/google/pprof/profile"

	"github.com/steward-oam/steward/bench/record"
)

// heapTopPackages is how many packages a heap summary names; the rest is
// summed in one entry, otherPackages.
const heapTopPackages = 12

// heapProfileTimeout bounds the heap profile's request.
const heapProfileTimeout = 5 * time.Minute

// otherPackages sums the in-use space of the packages a summary does not
// name.
const otherPackages = "other packages"

// HeapProfile has the controller collect garbage and writes its heap
// profile (/debug/pprof/heap?gc=1, the same forced collection HeapAfterGC
// makes) to path, then summarises its in-use space by package.
func (p *Process) HeapProfile(ctx context.Context, path string) ([]record.HeapPackage, error) {
	if p.PprofURL == "" {
		return nil, fmt.Errorf("controller %s serves no pprof endpoints: add --pprof-addr=%s to its command line", p.Name, record.PlaceholderPprofAddr)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.PprofURL+"heap?gc=1", nil)
	if err != nil {
		return nil, err
	}
	// A profile of a heap sampled finely (GODEBUG=memprofilerate=1) takes
	// far longer to write than the 30 s of the other requests.
	resp, err := (&http.Client{Timeout: heapProfileTimeout}).Do(req)
	if err != nil {
		return nil, fmt.Errorf("controller %s: heap profile: %w", p.Name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("controller %s: heap profile: %s", p.Name, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return nil, fmt.Errorf("controller %s: heap profile: %w", p.Name, err)
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	return summariseHeap(path)
}

// summariseHeap sums the in-use space of the heap profile at path by the
// Go package of the function that allocated it, largest first: the
// heapTopPackages largest, then the rest as otherPackages.
func summariseHeap(path string) ([]record.HeapPackage, error) {
	byPkg, total, err := sumProfile(path, "heap", "inuse_space", allocatingPackage)
	if err != nil {
		return nil, err
	}
	var out []record.HeapPackage
	if total == 0 {
		return out, nil
	}
	for pkg, v := range byPkg {
		if v > 0 {
			out = append(out, record.HeapPackage{Package: pkg, Bytes: v, Share: v / total})
		}
	}
	// Largest first; the package path breaks ties.
	slices.SortFunc(out, func(a, b record.HeapPackage) int {
		return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), strings.Compare(a.Package, b.Package))
	})
	if len(out) > heapTopPackages {
		rest := record.HeapPackage{Package: otherPackages}
		for _, h := range out[heapTopPackages:] {
			rest.Bytes += h.Bytes
		}
		rest.Share = rest.Bytes / total
		out = append(out[:heapTopPackages], rest)
	}
	return out, nil
}

// allocatingPackage is the package of the innermost function of the
// sample's stack that is not an allocation helper (allocHelper): the
// runtime's makeslice, newobject or mapassign, reflect.New behind a JSON
// decoder, a sync.Map's nodes allocate for their caller, which is what
// holds the memory. A stack of helpers only counts as the innermost one.
func allocatingPackage(s *profile.Sample) string {
	first := ""
	for _, loc := range s.Location {
		// A location's lines run from the innermost inlined function out.
		for _, line := range loc.Line {
			if line.Function == nil {
				continue
			}
			pkg := packageOf(line.Function.Name)
			if pkg == "" {
				continue
			}
			if !allocHelper(pkg) {
				return pkg
			}
			if first == "" {
				first = pkg
			}
		}
	}
	if first == "" {
		return "runtime"
	}
	return first
}

// allocHelper reports whether pkg allocates on behalf of its callers: the
// runtime, reflect, sync, unique and the standard library's internal
// packages.
func allocHelper(pkg string) bool {
	switch pkg {
	case "runtime", "reflect", "sync", "unique":
		return true
	}
	return strings.HasPrefix(pkg, "internal/") || strings.HasPrefix(pkg, "runtime/internal/")
}

// packageOf is the import path of a Go function's symbol name:
// "k8s.io/client-go/tools/cache.(*threadSafeMap).Add" is in
// "k8s.io/client-go/tools/cache". The package ends at the first dot after
// the last slash (the linker escapes the dots of the last path element,
// gopkg.in/yaml%2ev3), and type arguments in brackets may hold slashes of
// their own.
func packageOf(name string) string {
	if i := strings.IndexByte(name, '['); i >= 0 {
		name = name[:i]
	}
	slash := strings.LastIndexByte(name, '/')
	if dot := strings.IndexByte(name[slash+1:], '.'); dot >= 0 {
		name = name[:slash+1+dot]
	}
	return strings.ReplaceAll(name, "%2e", ".")
}

// fillHeapProfiles summarises again the soak's heap profiles of res that
// are still on disk (FillProfiles); a profile no longer there keeps its
// summary.
func fillHeapProfiles(res *record.Results) {
	for i := range res.Soak {
		sk := &res.Soak[i]
		if sk.HeapProfile == "" {
			continue
		}
		if pkgs, err := summariseHeap(sk.HeapProfile); err == nil {
			sk.HeapByPackage = pkgs
		}
	}
}
