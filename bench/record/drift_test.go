package record

import "testing"

// Quantiles are nearest-rank, and a change never repaired ranks above
// every repair, so that unrepaired changes cannot flatter p99.
func TestFleetDrift_Quantiles(t *testing.T) {
	var d FleetDrift
	for i := 1; i <= 100; i++ {
		d.Repairs = append(d.Repairs, float64(i)/100)
	}
	p50, p95, p99, hi := d.Quantiles()
	if p50 != 0.50 || p95 != 0.95 || p99 != 0.99 || hi != 1.00 {
		t.Errorf("p50 %v p95 %v p99 %v max %v: want 0.50 0.95 0.99 1.00", p50, p95, p99, hi)
	}
	d.Repairs, d.Unrepaired = d.Repairs[:98], 2
	if _, _, p99, _ := d.Quantiles(); p99 != 0.98 {
		t.Errorf("p99 with two unrepaired of 100 = %v: want the largest repair, 0.98", p99)
	}
}

func TestStats_MinMedianMeanMax(t *testing.T) {
	lo, med, mean, hi := stats([]float64{4, 1, 3, 2})
	if lo != 1 || med != 2.5 || mean != 2.5 || hi != 4 {
		t.Errorf("stats = %v %v %v %v", lo, med, mean, hi)
	}
}
