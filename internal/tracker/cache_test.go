package tracker

import (
	"fmt"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/steward-oam/steward/api/v1beta1"
)

func TestEntries_DecodedOncePerResourceVersion(t *testing.T) {
	rt := benchTracker(t, 3, v1beta1.CompressionZstd)
	first, err := Entries(rt)
	if err != nil {
		t.Fatal(err)
	}
	first[0].Deleted = true // the caller's copy
	again, err := Entries(rt)
	if err != nil {
		t.Fatal(err)
	}
	if again[0].Deleted {
		t.Error("a caller's change to its entries reached the cache")
	}

	// Changed in memory but not written (same resourceVersion): decoded
	// again, never answered from the cache.
	if err := Encode(&rt.Spec, again[:1], v1beta1.CompressionZstd); err != nil {
		t.Fatal(err)
	}
	got, err := Entries(rt)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !reflect.DeepEqual(got[0], again[0]) {
		t.Errorf("entries after an unwritten change = %d, want 1", len(got))
	}
	if raw, _ := Sizes(rt); raw == 0 {
		t.Error("Sizes of a compressed tracker is 0")
	}
}

func TestEntryCache_Bounded(t *testing.T) {
	c := &entryCache{maxEntries: 3, maxBytes: 1 << 20}
	rt := benchTracker(t, 2, v1beta1.CompressionZstd)
	for i := range 10 {
		rt.UID = types.UID(fmt.Sprint("uid-", i))
		if _, err := c.get(rt); err != nil {
			t.Fatal(err)
		}
	}
	if c.lru.Len() != 3 || len(c.byKey) != 3 {
		t.Errorf("cache holds %d (%d keys), want 3", c.lru.Len(), len(c.byKey))
	}
	c = &entryCache{maxEntries: 100, maxBytes: 1}
	if _, err := c.get(rt); err != nil || c.lru.Len() != 0 || c.bytes != 0 {
		t.Errorf("an entry over the byte bound was kept: %d entries, %d bytes, %v", c.lru.Len(), c.bytes, err)
	}
}
