package record

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Placeholders the harness fills in a controller command line.
const (
	// PlaceholderMetricsAddr becomes a free loopback address for the
	// controller's Prometheus endpoint; the command must contain it.
	PlaceholderMetricsAddr = "{metrics-addr}"
	// PlaceholderQPS and PlaceholderBurst become the client rate limits
	// of the run, so every controller gets the same.
	PlaceholderQPS   = "{qps}"
	PlaceholderBurst = "{burst}"
	// PlaceholderPprofAddr becomes a free loopback address for the
	// controller's /debug/pprof/ endpoints. Optional: with it, memory is
	// read after a collection the harness forces (measure.Process.HeapAfterGC).
	PlaceholderPprofAddr = "{pprof-addr}"
)

// Controller is a controller under test: a name for reports and a command
// line run from the working directory, with placeholders.
type Controller struct {
	Name    string `json:"name"`
	Command string `json:"command"`
}

// ParseController parses "name=command line".
func ParseController(v string) (Controller, error) {
	name, cmd, ok := strings.Cut(v, "=")
	name, cmd = strings.TrimSpace(name), strings.TrimSpace(cmd)
	if !ok || name == "" || cmd == "" {
		return Controller{}, fmt.Errorf("controller %q: want name=command line", v)
	}
	if !strings.Contains(cmd, PlaceholderMetricsAddr) {
		return Controller{}, fmt.Errorf("controller %s: the command line must contain %s where its metrics address goes", name, PlaceholderMetricsAddr)
	}
	return Controller{Name: name, Command: cmd}, nil
}

// ServesPprof reports whether the command line asks for pprof endpoints.
func (c Controller) ServesPprof() bool { return strings.Contains(c.Command, PlaceholderPprofAddr) }

// Args expands the placeholders and splits the command line like a shell
// would for plain words, 'single' and "double" quotes.
func (c Controller) Args(metricsAddr, pprofAddr string, qps float64, burst int) ([]string, error) {
	cmd := strings.NewReplacer(
		PlaceholderMetricsAddr, metricsAddr,
		PlaceholderPprofAddr, pprofAddr,
		PlaceholderQPS, strconv.FormatFloat(qps, 'f', -1, 64),
		PlaceholderBurst, strconv.Itoa(burst),
	).Replace(c.Command)
	return splitCommand(cmd)
}

func splitCommand(s string) ([]string, error) {
	var args []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				args = append(args, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote in %q", quote, s)
	}
	if inWord {
		args = append(args, cur.String())
	}
	if len(args) == 0 {
		return nil, errors.New("empty command line")
	}
	return args, nil
}

// WatchModeFlag is how a controller command line asks Steward for watch
// mode; the report checks the issue 12 targets on such a controller.
const WatchModeFlag = "--drift-detection=watch"

// IsWatchMode reports whether c runs Steward in watch mode.
func (c Controller) IsWatchMode() bool {
	return strings.Contains(c.Command, WatchModeFlag) || strings.Contains(c.Command, "--drift-detection watch")
}
