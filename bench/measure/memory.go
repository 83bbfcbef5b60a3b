package measure

import (
	"context"
	"slices"
	"sort"
	"time"

	"github.com/steward-oam/steward/bench/record"
)

// SampleMemory measures heap in use after a collection and RSS. A
// controller serving pprof is made to collect garbage cfg.GCs times,
// cfg.Window/cfg.GCs apart, and the medians are reported (a pass in flight
// at one collection holds its objects then). Otherwise /metrics is sampled
// every cfg.SampleEvery for at least cfg.Window and until the controller
// has collected garbage cfg.GCs times (up to cfg.MaxWindow): heap in use
// swings between the live heap and about twice that with the GC cycle, so
// the heap reported is, over the cycles seen, the median of the lowest
// sample of each cycle. RSS, which the GC barely moves, is the median of
// all samples.
func SampleMemory(ctx context.Context, p *Process, cfg record.MemoryConfig) (record.MemoryPoint, error) {
	if p.PprofURL != "" {
		return sampleAfterForcedGC(ctx, p, cfg)
	}
	var pt record.MemoryPoint
	start := time.Now()
	first, err := p.Memory(ctx)
	if err != nil {
		return pt, err
	}
	pt.SampleCount = 1
	cycleMin := map[float64]float64{}
	var heap, rss []float64
	for {
		if err := sleep(ctx, cfg.SampleEvery.D()); err != nil {
			return pt, err
		}
		m, err := p.Memory(ctx)
		if err != nil {
			return pt, err
		}
		pt.SampleCount++
		heap, rss = append(heap, m.HeapInuse), append(rss, m.RSS)
		if m.GCs > first.GCs {
			if low, ok := cycleMin[m.GCs]; !ok || m.HeapInuse < low {
				cycleMin[m.GCs] = m.HeapInuse
			}
		}
		pt.GCs = m.GCs - first.GCs
		elapsed := time.Since(start)
		if (elapsed >= cfg.Window.D() && pt.GCs >= float64(cfg.GCs)) || elapsed >= cfg.MaxWindow.D() {
			break
		}
	}
	pt.RSS = median(rss)
	pt.HeapInuseMedian = median(heap)
	lows := make([]float64, 0, len(cycleMin))
	for _, v := range cycleMin {
		lows = append(lows, v)
	}
	if len(lows) == 0 {
		lows = []float64{slices.Min(heap)} // no collection: the heap did not grow either
	}
	pt.HeapInuse = median(lows)
	return pt, nil
}

// sampleAfterForcedGC is SampleMemory for a controller serving pprof.
func sampleAfterForcedGC(ctx context.Context, p *Process, cfg record.MemoryConfig) (record.MemoryPoint, error) {
	n := max(cfg.GCs, 1)
	pt := record.MemoryPoint{ForcedGC: true}
	var heap, rss []float64
	for i := range n {
		if i > 0 {
			if err := sleep(ctx, cfg.Window.D()/time.Duration(n)); err != nil {
				return pt, err
			}
		}
		h, err := p.HeapAfterGC(ctx)
		if err != nil {
			return pt, err
		}
		heap, rss = append(heap, h.HeapInuse), append(rss, h.RSS)
	}
	pt.SampleCount, pt.GCs = n, float64(n)
	pt.HeapInuse, pt.HeapInuseMedian, pt.RSS = median(heap), median(heap), median(rss)
	return pt, nil
}

// median is the middle of xs (the mean of the two middle values of an
// even count), 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
