package tracker

import (
	"container/list"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/steward-oam/steward/api/v1beta1"
)

// decodedEntries remembers the last compressed trackers decoded, so that
// the phases of one reconcile pass (reuse, apply, health, garbage
// collection, status, size metrics) decompress and unmarshal a tracker
// once instead of each time. It is bounded by count and by decoded size,
// least recently used first out, so memory does not grow with the number
// of Applications or passes.
var decodedEntries = &entryCache{maxEntries: 64, maxBytes: 32 << 20}

// cacheKey names one stored state of one tracker: a write changes the
// resourceVersion.
type cacheKey struct {
	uid types.UID
	rv  string
}

type decoded struct {
	key cacheKey
	// data is the compressed data decoded, compared on a hit so that a
	// tracker changed in memory but not yet written is never answered
	// from the cache.
	data    string
	entries []v1beta1.ManagedResource
	rawSize int
}

type entryCache struct {
	mu         sync.Mutex
	maxEntries int
	maxBytes   int
	bytes      int
	lru        list.List // of *decoded, most recent first
	byKey      map[cacheKey]*list.Element
}

// get returns the decoded compressed entries of rt (without the plain
// ones Decode appends), from the cache when rt's stored state was decoded
// before.
func (c *entryCache) get(rt *v1beta1.ResourceTracker) (*decoded, error) {
	key := cacheKey{uid: rt.UID, rv: rt.ResourceVersion}
	cacheable := key.uid != "" && key.rv != ""
	if cacheable {
		c.mu.Lock()
		if el, ok := c.byKey[key]; ok && el.Value.(*decoded).data == rt.Spec.Compression.Data {
			c.lru.MoveToFront(el)
			d := el.Value.(*decoded)
			c.mu.Unlock()
			return d, nil
		}
		c.mu.Unlock()
	}
	d, err := decodeCompressed(&rt.Spec)
	if err != nil {
		return nil, err
	}
	d.key = key
	if cacheable {
		c.put(d)
	}
	return d, nil
}

func (c *entryCache) put(d *decoded) {
	if d.rawSize > c.maxBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byKey == nil {
		c.byKey = map[cacheKey]*list.Element{}
	}
	if el, ok := c.byKey[d.key]; ok {
		c.remove(el)
	}
	c.byKey[d.key] = c.lru.PushFront(d)
	c.bytes += d.rawSize
	for c.lru.Len() > c.maxEntries || c.bytes > c.maxBytes {
		c.remove(c.lru.Back())
	}
}

func (c *entryCache) remove(el *list.Element) {
	d := c.lru.Remove(el).(*decoded)
	delete(c.byKey, d.key)
	c.bytes -= d.rawSize
}

// decodeCompressed decompresses and unmarshals spec.compression.data.
func decodeCompressed(spec *v1beta1.ResourceTrackerSpec) (*decoded, error) {
	packed, err := base64.StdEncoding.DecodeString(spec.Compression.Data)
	if err != nil {
		return nil, fmt.Errorf("decoding %s data: %w", spec.Compression.Type, err)
	}
	raw, err := decompress(spec.Compression.Type, packed)
	if err != nil {
		return nil, err
	}
	var entries []v1beta1.ManagedResource
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf("decoding managed resources: %w", err)
	}
	return &decoded{data: spec.Compression.Data, entries: entries, rawSize: len(raw)}, nil
}

// entriesOf returns a copy of the cached entries that the caller may
// change: entries are values, and their manifests are never modified in
// place.
func (d *decoded) entriesOf(plain []v1beta1.ManagedResource) []v1beta1.ManagedResource {
	out := make([]v1beta1.ManagedResource, 0, len(d.entries)+len(plain))
	return append(append(out, d.entries...), plain...)
}
