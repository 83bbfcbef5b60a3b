package measure

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"sort"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Sample is one line of the Prometheus text exposition format.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// Samples is a parsed /metrics page.
type Samples []Sample

// Sum adds the values of the samples named name whose labels include every
// pair of match.
func (ss Samples) Sum(name string, match map[string]string) float64 {
	total := 0.0
	for _, s := range ss {
		if s.Name == name && s.matches(match) {
			total += s.Value
		}
	}
	return total
}

// Has reports whether any sample is named name.
func (ss Samples) Has(name string) bool {
	for _, s := range ss {
		if s.Name == name {
			return true
		}
	}
	return false
}

func (s Sample) matches(match map[string]string) bool {
	for k, v := range match {
		if s.Labels[k] != v {
			return false
		}
	}
	return true
}

// ParseText parses the Prometheus text format (version 0.0.4) with
// prometheus/common's expfmt and flattens it into the samples a scraper
// sees: a summary or histogram becomes its quantile or _bucket samples plus
// _sum and _count. Samples come sorted by name, then labels.
func ParseText(data []byte) (Samples, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("parsing metrics: %w", err)
	}
	names := slices.Sorted(maps.Keys(families))
	var out Samples
	for _, name := range names {
		vec, err := expfmt.ExtractSamples(&expfmt.DecodeOptions{}, families[name])
		if err != nil {
			return nil, fmt.Errorf("metric %s: %w", name, err)
		}
		sort.Sort(vec)
		for _, s := range vec {
			labels := make(map[string]string, len(s.Metric))
			for k, v := range s.Metric {
				if k != model.MetricNameLabel {
					labels[string(k)] = string(v)
				}
			}
			out = append(out, Sample{Name: string(s.Metric[model.MetricNameLabel]), Labels: labels, Value: float64(s.Value)})
		}
	}
	return out, nil
}

// scrape fetches and parses one /metrics page.
func scrape(ctx context.Context, hc *http.Client, url string) (Samples, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	// Ask for the text format: expfmt parses nothing else here.
	req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scraping %s: %s", url, resp.Status)
	}
	return ParseText(body)
}
