package harness

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
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

// ParseText parses the Prometheus text format (version 0.0.4): comments
// and blank lines are skipped, label values may hold escaped quotes,
// backslashes and newlines, and a trailing timestamp is ignored.
func ParseText(data []byte) (Samples, error) {
	var out Samples
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		s, err := parseLine(line)
		if err != nil {
			return nil, fmt.Errorf("metrics line %d: %w", n, err)
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

func parseLine(line string) (Sample, error) {
	s := Sample{Labels: map[string]string{}}
	i := strings.IndexAny(line, "{ \t")
	if i <= 0 {
		return s, fmt.Errorf("no value in %q", line)
	}
	s.Name = line[:i]
	rest := line[i:]
	if rest[0] == '{' {
		var err error
		if rest, err = parseLabels(rest[1:], s.Labels); err != nil {
			return s, err
		}
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 || len(fields) > 2 {
		return s, fmt.Errorf("want a value and an optional timestamp after %s", s.Name)
	}
	v, err := parseValue(fields[0])
	if err != nil {
		return s, fmt.Errorf("value of %s: %w", s.Name, err)
	}
	s.Value = v
	return s, nil
}

// parseLabels reads `name="value",...}` into labels and returns what
// follows the closing brace.
func parseLabels(in string, labels map[string]string) (string, error) {
	for {
		in = strings.TrimLeft(in, " \t,")
		if strings.HasPrefix(in, "}") {
			return in[1:], nil
		}
		eq := strings.IndexByte(in, '=')
		if eq <= 0 || len(in) < eq+2 || in[eq+1] != '"' {
			return "", fmt.Errorf("malformed label in %q", in)
		}
		name := strings.TrimSpace(in[:eq])
		var value strings.Builder
		j := eq + 2
		for ; j < len(in) && in[j] != '"'; j++ {
			if in[j] == '\\' && j+1 < len(in) {
				j++
				switch in[j] {
				case 'n':
					value.WriteByte('\n')
				default:
					value.WriteByte(in[j])
				}
				continue
			}
			value.WriteByte(in[j])
		}
		if j >= len(in) {
			return "", fmt.Errorf("unterminated value of label %s", name)
		}
		labels[name] = value.String()
		in = in[j+1:]
	}
}

func parseValue(v string) (float64, error) {
	switch v {
	case "+Inf":
		return math.Inf(1), nil
	case "-Inf":
		return math.Inf(-1), nil
	case "NaN":
		return math.NaN(), nil
	}
	return strconv.ParseFloat(v, 64)
}

// scrape fetches and parses one /metrics page.
func scrape(ctx context.Context, hc *http.Client, url string) (Samples, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
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
