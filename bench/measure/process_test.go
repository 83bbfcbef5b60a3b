package measure

import "testing"

func TestParseMemStats_ReadsTheMemStatsAtTheEndOfAHeapProfile(t *testing.T) {
	profile := "heap profile: 1: 2 [3: 4] @ heap/1048576\n1: 2 [3: 4] @ 0x1\n\n# runtime.MemStats\n# Alloc = 11\n# HeapAlloc = 1234\n# HeapSys = 9\n# HeapInuse = 5678\n# NumGC = 3\n"
	h, err := parseMemStats(profile)
	if err != nil || h.HeapInuse != 5678 || h.HeapAlloc != 1234 {
		t.Errorf("parseMemStats = %+v, %v", h, err)
	}
	if _, err := parseMemStats("heap profile: 1: 2 [3: 4] @ heap/1048576\n"); err == nil {
		t.Errorf("a profile without MemStats was accepted")
	}
}
