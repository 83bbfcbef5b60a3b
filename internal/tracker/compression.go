package tracker

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/steward-oam/steward/api/v1beta1"
)

// Encode stores entries in spec according to compression: as a plain list,
// or compressed into spec.compression.data. Big applications need it: etcd
// rejects objects over 1.5 MiB and rendered manifests compress well.
func Encode(spec *v1beta1.ResourceTrackerSpec, entries []v1beta1.ManagedResource, compression v1beta1.CompressionType) error {
	if compression == v1beta1.CompressionNone {
		spec.ManagedResources = entries
		spec.Compression = v1beta1.ResourceTrackerCompression{}
		return nil
	}
	raw, err := json.Marshal(entries)
	if err != nil {
		return fmt.Errorf("encoding managed resources: %w", err)
	}
	if len(raw) > maxDecodedSize {
		return fmt.Errorf("managed resources are %d bytes as JSON, over the %d a tracker can hold", len(raw), maxDecodedSize)
	}
	packed, err := compress(compression, raw)
	if err != nil {
		return err
	}
	spec.ManagedResources = nil
	spec.Compression = v1beta1.ResourceTrackerCompression{
		Type: compression,
		Data: base64.StdEncoding.EncodeToString(packed),
	}
	return nil
}

// Decode returns the entries of spec, whichever way they are stored.
func Decode(spec *v1beta1.ResourceTrackerSpec) ([]v1beta1.ManagedResource, error) {
	if spec.Compression.Type == v1beta1.CompressionNone || spec.Compression.Data == "" {
		return slices.Clone(spec.ManagedResources), nil
	}
	d, err := decodeCompressed(spec)
	if err != nil {
		return nil, err
	}
	return d.entriesOf(spec.ManagedResources), nil
}

// maxDecodedSize bounds the JSON a compressed tracker decodes to, and so
// what Encode writes. The data is at most what etcd stores (1.5 MiB), but
// a few bytes of it can claim or expand to gigabytes: a zstd frame header
// alone makes the decoder allocate its declared size, and an out-of-memory
// error is fatal, so a tracker edited by hand would crash the controller
// on every pass. Rendered manifests compress about tenfold, so real
// trackers decode to tens of MiB at most.
const maxDecodedSize = 128 << 20

// The codecs are built once and shared: a zstd encoder or decoder holds
// megabytes of tables and buffers, and EncodeAll and DecodeAll are safe
// for concurrent use. Building one per call cost more than the work.
var (
	zstdEncoder = sync.OnceValues(func() (*zstd.Encoder, error) {
		// Lower memory: the encoder's tables were the biggest fixed cost of
		// the controller's heap (about 3 MiB at the defaults, 2.5 MiB for
		// two encoders of the default level). Trackers are small and written
		// once per version, so speed matters little: one encoder of the
		// fastest level (concurrent writes take turns; a 400 KiB tracker
		// takes about a millisecond) left 2.3 MiB less live heap in the
		// bench's soak, and stores a few percent more (500 Deployments:
		// 2,376 bytes against 2,320).
		return zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedFastest),
			zstd.WithLowerEncoderMem(true), zstd.WithWindowSize(1<<20))
	})
	zstdDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
		return zstd.NewReader(nil, zstd.WithDecoderConcurrency(min(runtime.GOMAXPROCS(0), 4)),
			zstd.WithDecoderMaxMemory(maxDecodedSize))
	})
	gzipWriters sync.Pool
)

// Compress packs raw with t (gzip or zstd) using the trackers' shared
// codecs; internal/apprevision stores ApplicationRevisions with it.
func Compress(t v1beta1.CompressionType, raw []byte) ([]byte, error) { return compress(t, raw) }

// Decompress unpacks what Compress packed, bounded as a tracker's data is
// (MaxDecodedSize).
func Decompress(t v1beta1.CompressionType, packed []byte) ([]byte, error) {
	return decompress(t, packed)
}

// MaxDecodedSize is the most JSON compressed data may decode to.
const MaxDecodedSize = maxDecodedSize

func compress(t v1beta1.CompressionType, raw []byte) ([]byte, error) {
	var buf bytes.Buffer
	switch t {
	case v1beta1.CompressionGzip:
		w, _ := gzipWriters.Get().(*gzip.Writer)
		if w == nil {
			w = gzip.NewWriter(&buf)
		} else {
			w.Reset(&buf)
		}
		defer gzipWriters.Put(w)
		if _, err := w.Write(raw); err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		if err := w.Close(); err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		return buf.Bytes(), nil
	case v1beta1.CompressionZstd:
		enc, err := zstdEncoder()
		if err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		return enc.EncodeAll(raw, make([]byte, 0, len(raw)/4)), nil
	default:
		return nil, fmt.Errorf("unknown compression %q", t)
	}
}

func decompress(t v1beta1.CompressionType, packed []byte) ([]byte, error) {
	switch t {
	case v1beta1.CompressionGzip:
		r, err := gzip.NewReader(bytes.NewReader(packed))
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		defer r.Close()
		out, err := io.ReadAll(io.LimitReader(r, maxDecodedSize+1))
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		if len(out) > maxDecodedSize {
			return nil, fmt.Errorf("gzip: decompressed data exceeds %d bytes", maxDecodedSize)
		}
		return out, nil
	case v1beta1.CompressionZstd:
		dec, err := zstdDecoder()
		if err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		out, err := dec.DecodeAll(packed, nil)
		if err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		return out, nil
	default:
		return nil, fmt.Errorf("unknown compression %q", t)
	}
}

// Sizes returns the size of a tracker's managed resources as JSON (raw)
// and as stored in the object (compressed data, or the plain list).
func Sizes(rt *v1beta1.ResourceTracker) (raw, stored int) {
	if rt.Spec.Compression.Type == v1beta1.CompressionNone || rt.Spec.Compression.Data == "" {
		plain, _ := json.Marshal(rt.Spec.ManagedResources)
		return len(plain), len(plain)
	}
	d, err := decodedEntries.get(rt)
	if err != nil {
		return 0, 0
	}
	return d.rawSize, len(rt.Spec.Compression.Data)
}
