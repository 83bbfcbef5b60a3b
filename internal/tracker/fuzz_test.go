package tracker

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"reflect"
	goruntime "runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/steward-oam/steward/api/v1beta1"
)

// FuzzDecode reads a tracker whose stored entries are arbitrary: a
// compression type, a payload (base64-encoded for the test, or taken as
// the data string itself when rawData is set, to reach the base64 decoder
// too) and a plain entry list given as JSON. A tracker is written by
// Steward, but anyone allowed to edit ResourceTrackers, a backup restore
// or another tool can leave anything there: reading it must return an
// error or the entries, never panic, and never allocate without bound.
func FuzzDecode(f *testing.F) {
	f.Fuzz(func(t *testing.T, compression string, payload []byte, rawData bool, plain []byte) {
		spec := v1beta1.ResourceTrackerSpec{Compression: v1beta1.ResourceTrackerCompression{
			Type: v1beta1.CompressionType(compression),
			Data: base64.StdEncoding.EncodeToString(payload),
		}}
		if rawData {
			spec.Compression.Data = string(payload)
		}
		if err := json.Unmarshal(plain, &spec.ManagedResources); err != nil {
			spec.ManagedResources = nil
		}

		before := allocated()
		got, err := Decode(&spec)
		if n := allocated() - before; n > decodeAllocBound(len(spec.Compression.Data)) {
			t.Fatalf("decoding %d bytes of %q data allocated %d bytes", len(spec.Compression.Data), compression, n)
		}

		// Entries reads through the decode cache, the second time from it:
		// the same answer. Each input is a tracker of its own (a UID and
		// resourceVersion never stand for two different specs).
		rt := &v1beta1.ResourceTracker{Spec: spec}
		rt.Name, rt.ResourceVersion = "fuzz", "1"
		rt.UID = types.UID("uid-fuzz-" + strconv.FormatUint(fuzzTrackers.Add(1), 10))
		for range 2 {
			again, againErr := Entries(rt)
			if (err == nil) != (againErr == nil) {
				t.Fatalf("Decode and Entries disagree: %v, %v", err, againErr)
			}
			if err == nil && !reflect.DeepEqual(got, again) {
				t.Fatalf("Decode and Entries disagree:\n%+v\n%+v", got, again)
			}
		}
		if err != nil {
			return
		}
		// Plain entries come last, as they are.
		if len(got) < len(spec.ManagedResources) {
			t.Fatalf("got %d entries, fewer than the %d plain ones", len(got), len(spec.ManagedResources))
		}
		if tail := got[len(got)-len(spec.ManagedResources):]; len(tail) > 0 && !reflect.DeepEqual(tail, spec.ManagedResources) {
			t.Fatalf("plain entries changed:\n got %+v\nwant %+v", tail, spec.ManagedResources)
		}
	})
}

// fuzzTrackers numbers the trackers FuzzDecode reads.
var fuzzTrackers atomic.Uint64

// FuzzEncodeDecode writes two entries built from arbitrary fields with
// each compression and reads them back: the same entries come back, or
// Encode refuses a manifest that is not JSON. Strings are valid UTF-8, as
// in any object the API server returns; manifests are compared as JSON
// values, since encoding compacts them.
func FuzzEncodeDecode(f *testing.F) {
	f.Fuzz(func(t *testing.T, compression uint8, cluster, apiVersion, kind, namespace, name, component, trait, env string,
		raw []byte, deleted, skipGC bool) {
		for _, s := range []string{cluster, apiVersion, kind, namespace, name, component, trait, env} {
			if !utf8.ValidString(s) {
				return
			}
		}
		ct := []v1beta1.CompressionType{v1beta1.CompressionNone, v1beta1.CompressionGzip, v1beta1.CompressionZstd}[compression%3]
		first := v1beta1.ManagedResource{
			ClusterObjectReference: v1beta1.ClusterObjectReference{Cluster: cluster, APIVersion: apiVersion, Kind: kind, Namespace: namespace, Name: name},
			OAMObjectReference:     v1beta1.OAMObjectReference{Component: component, Trait: trait, Env: env},
			Deleted:                deleted,
			SkipGC:                 skipGC,
		}
		if raw != nil {
			first.Data = &runtime.RawExtension{Raw: raw}
		}
		// A metadata-only entry after it keeps the order in question.
		second := first
		second.Name, second.Data, second.Deleted = name+"-2", nil, !deleted
		entries := []v1beta1.ManagedResource{first, second}

		var spec v1beta1.ResourceTrackerSpec
		if err := Encode(&spec, entries, ct); err != nil {
			if ct == v1beta1.CompressionNone || json.Valid(raw) {
				t.Fatalf("Encode(%s) refused valid entries: %v", ct, err)
			}
			return
		}
		got, err := Decode(&spec)
		if err != nil {
			t.Fatalf("Decode(%s) of what Encode wrote: %v", ct, err)
		}
		if len(got) != len(entries) {
			t.Fatalf("Decode(%s): %d entries, want %d", ct, len(got), len(entries))
		}
		for i := range entries {
			want, have := entries[i], got[i]
			if ct == v1beta1.CompressionNone {
				// Stored as it is, JSON or not (the API server checks).
				if !reflect.DeepEqual(want.Data, have.Data) {
					t.Fatalf("Decode entry %d: manifest %v, want %v", i, have.Data, want.Data)
				}
			} else if wm, hm := manifestValue(t, want.Data), manifestValue(t, have.Data); !reflect.DeepEqual(wm, hm) {
				t.Fatalf("Decode(%s) entry %d: manifest %#v, want %#v", ct, i, hm, wm)
			}
			want.Data, have.Data = nil, nil
			if want != have {
				t.Fatalf("Decode(%s) entry %d:\n got %+v\nwant %+v", ct, i, have, want)
			}
		}
	})
}

// The zstd regression seeds of FuzzDecode (zstd-claims-*, zstd-bomb-*)
// check the bound on zstd data; this checks it on gzip data, whose bomb is
// too large for a seed file.
func TestDecode_RefusesGzipOverTheBound(t *testing.T) {
	var packed bytes.Buffer
	w, err := gzip.NewWriterLevel(&packed, gzip.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	// An empty list padded with spaces: valid entries, only too many bytes.
	spaces := bytes.Repeat([]byte(" "), 1<<20)
	_, _ = w.Write([]byte("["))
	for range maxDecodedSize/len(spaces) + 1 {
		if _, err := w.Write(spaces); err != nil {
			t.Fatal(err)
		}
	}
	_, _ = w.Write([]byte("]"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	spec := v1beta1.ResourceTrackerSpec{Compression: v1beta1.ResourceTrackerCompression{
		Type: v1beta1.CompressionGzip, Data: base64.StdEncoding.EncodeToString(packed.Bytes()),
	}}
	before := allocated()
	_, err = Decode(&spec)
	if err == nil {
		t.Fatalf("decoded %d bytes of gzip that expand past %d bytes", packed.Len(), maxDecodedSize)
	}
	if n := allocated() - before; n > decodeAllocBound(len(spec.Compression.Data)) {
		t.Fatalf("refusing %d bytes of gzip allocated %d bytes", packed.Len(), n)
	}
}

// manifestValue is a recorded manifest as a JSON value; nil for none.
func manifestValue(t *testing.T, d *runtime.RawExtension) any {
	t.Helper()
	if d == nil || len(d.Raw) == 0 || string(d.Raw) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(d.Raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("manifest %q: %v", d.Raw, err)
	}
	return v
}

// allocated is the heap allocated so far by the process.
func allocated() uint64 {
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	return m.TotalAlloc
}

// decodeAllocBound is how much decoding n bytes of stored data may
// allocate: the decoded JSON, at most maxDecodedSize in a buffer grown by
// doubling (about twice that allocated over all), and the entries
// unmarshalled from it, a few times that. What the data claims to hold
// does not count.
func decodeAllocBound(n int) uint64 {
	return 8*maxDecodedSize + 64*uint64(n)
}
