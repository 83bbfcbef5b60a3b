package fetch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/Masterminds/semver/v3"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
)

// Helm's media types for a chart in an OCI registry.
const (
	chartLayerMediaType       = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
	legacyChartLayerMediaType = "application/tar+gzip"
	maxManifestBytes          = 4 << 20
)

// fetchOCI pulls a chart from an OCI registry with oras-go, the library
// Helm's own registry client uses. Steward drives it directly rather
// than through Helm's registry.Client so that the pull is bounded (the
// manifest and the chart layer are refused past their size before they
// are read), is cancelled with the fetch, and never reads the
// credentials of the controller's own home directory (Helm's client
// falls back to ~/.docker/config.json).
func (f *Fetcher) fetchOCI(ctx context.Context, src Source, a *Auth) (*Fetched, error) {
	ref := strings.TrimPrefix(src.Chart, "oci://")
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		return nil, permanent(errors.New("give the tag as chart.version, not in the reference"))
	}
	repository, err := remote.NewRepository(ref)
	if err != nil {
		return nil, permanent(fmt.Errorf("not an OCI reference: %w", err))
	}
	hc, err := f.httpClient(a)
	if err != nil {
		return nil, err
	}
	client := &auth.Client{Client: hc, Cache: auth.NewCache()}
	if a != nil && a.Username != "" {
		client.Credential = auth.StaticCredential(repository.Reference.Registry, auth.Credential{Username: a.Username, Password: a.Password})
	}
	repository.Client = client
	repository.PlainHTTP = a != nil && a.PlainHTTP
	tag, err := resolveTag(ctx, repository, src.Version)
	if err != nil {
		return nil, err
	}
	desc, err := repository.Resolve(ctx, tag)
	if err != nil {
		return nil, classifyOCI(fmt.Errorf("tag %s: %w", tag, err))
	}
	if desc.Size > maxManifestBytes {
		return nil, permanent(fmt.Errorf("the manifest of %s is %d bytes", tag, desc.Size))
	}
	raw, err := fetchAll(ctx, repository, desc, maxManifestBytes)
	if err != nil {
		return nil, classifyOCI(fmt.Errorf("the manifest of %s: %w", tag, err))
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, permanent(fmt.Errorf("the manifest of %s does not parse: %w", tag, err))
	}
	for _, layer := range m.Layers {
		if layer.MediaType != chartLayerMediaType && layer.MediaType != legacyChartLayerMediaType {
			continue
		}
		name := ref[strings.LastIndex(ref, "/")+1:]
		if data := f.byDigest(layer.Digest.String(), a.identity()); data != nil {
			return fetched(data, name, tag), nil
		}
		if layer.Size > f.o.MaxChartBytes {
			return nil, permanent(fmt.Errorf("the chart of %s is %d bytes, more than the %d allowed", tag, layer.Size, f.o.MaxChartBytes))
		}
		data, err := fetchAll(ctx, repository, layer, f.o.MaxChartBytes)
		if err != nil {
			return nil, classifyOCI(fmt.Errorf("the chart of %s: %w", tag, err))
		}
		return fetched(data, name, tag), nil
	}
	return nil, permanent(fmt.Errorf("%s:%s is not a Helm chart (no layer of type %s)", ref, tag, chartLayerMediaType))
}

// resolveTag is version as a tag: itself when exact, else the highest
// semver tag that matches (latest: the highest of all).
func resolveTag(ctx context.Context, r *remote.Repository, version string) (string, error) {
	if version != "" && !strings.EqualFold(version, "latest") {
		if _, err := semver.StrictNewVersion(strings.TrimPrefix(version, "v")); err == nil || Mutable(version) && !isRange(version) {
			return strings.ReplaceAll(version, "+", "_"), nil
		}
	}
	var constraint *semver.Constraints
	if version != "" && !strings.EqualFold(version, "latest") {
		c, err := semver.NewConstraint(version)
		if err != nil {
			return "", permanent(fmt.Errorf("version %q is neither a tag nor a range: %w", version, err))
		}
		constraint = c
	}
	var best *semver.Version
	var bestTag string
	err := r.Tags(ctx, "", func(tags []string) error {
		for _, t := range tags {
			v, err := semver.StrictNewVersion(strings.ReplaceAll(t, "_", "+"))
			if err != nil || (constraint != nil && !constraint.Check(v)) || (constraint == nil && v.Prerelease() != "") {
				continue
			}
			if best == nil || v.GreaterThan(best) {
				best, bestTag = v, t
			}
		}
		return nil
	})
	if err != nil {
		return "", classifyOCI(fmt.Errorf("listing tags: %w", err))
	}
	if best == nil {
		return "", permanent(fmt.Errorf("no tag matches %q", version))
	}
	return bestTag, nil
}

// isRange reports whether a version reads as a semver range.
func isRange(v string) bool { return strings.ContainsAny(v, "^~<>=*xX|, ") }

func fetchAll(ctx context.Context, r *remote.Repository, desc ocispec.Descriptor, limit int64) ([]byte, error) {
	rc, err := r.Fetch(ctx, desc)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("more than the %d bytes allowed", limit)
	}
	if err := desc.Digest.Validate(); err != nil || desc.Digest.Algorithm().FromBytes(b) != desc.Digest {
		return nil, fmt.Errorf("the content does not match its digest %s", desc.Digest)
	}
	return b, nil
}
