package tracker

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"

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
		return spec.ManagedResources, nil
	}
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
	return append(entries, spec.ManagedResources...), nil
}

func compress(t v1beta1.CompressionType, raw []byte) ([]byte, error) {
	var buf bytes.Buffer
	switch t {
	case v1beta1.CompressionGzip:
		w := gzip.NewWriter(&buf)
		if _, err := w.Write(raw); err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		if err := w.Close(); err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		return buf.Bytes(), nil
	case v1beta1.CompressionZstd:
		enc, err := zstd.NewWriter(nil)
		if err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		defer enc.Close()
		return enc.EncodeAll(raw, nil), nil
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
		out, err := io.ReadAll(r)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		return out, nil
	case v1beta1.CompressionZstd:
		dec, err := zstd.NewReader(nil)
		if err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		defer dec.Close()
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
	entries, err := Decode(&rt.Spec)
	if err != nil {
		return 0, 0
	}
	plain, _ := json.Marshal(entries)
	if rt.Spec.Compression.Type == v1beta1.CompressionNone || rt.Spec.Compression.Data == "" {
		return len(plain), len(plain)
	}
	return len(plain), len(rt.Spec.Compression.Data)
}
