package chart

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strings"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"sigs.k8s.io/yaml"
)

// maxChartYAML bounds the Chart.yaml Metadata reads.
const maxChartYAML = 256 << 10

// Metadata reads the top chart's Chart.yaml from an archive without
// loading (or decompressing) the rest of it, for the controller, which
// does not render charts itself.
func Metadata(archive []byte) (*chartv2.Metadata, error) {
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		return nil, fmt.Errorf("the chart archive is not gzip: %w", err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, errors.New("the chart archive has no Chart.yaml")
		}
		if err != nil {
			return nil, fmt.Errorf("the chart archive does not read: %w", err)
		}
		parts := strings.Split(strings.TrimPrefix(h.Name, "./"), "/")
		if len(parts) != 2 || parts[1] != "Chart.yaml" {
			continue
		}
		b, err := io.ReadAll(io.LimitReader(tr, maxChartYAML))
		if err != nil {
			return nil, err
		}
		var md chartv2.Metadata
		if err := yaml.Unmarshal(b, &md); err != nil {
			return nil, fmt.Errorf("Chart.yaml: %w", err)
		}
		return &md, nil
	}
}
