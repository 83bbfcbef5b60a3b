package logging

import (
	"bytes"
	"strings"
	"testing"

	"go.uber.org/zap/zapcore"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// lines logs n identical lines at verbosity v through a logger at level
// and counts the lines written.
func lines(t *testing.T, level zapcore.Level, v, n int) int {
	t.Helper()
	var out bytes.Buffer
	log := New(&zap.Options{DestWriter: &out, Level: level})
	for range n {
		log.V(v).Info("Created", "object", "ConfigMap default/c")
	}
	if n > 0 && out.Len() > 0 && !strings.Contains(out.String(), `"msg":"Created"`) {
		t.Errorf("not controller-runtime's JSON lines: %.200s", out.String())
	}
	return strings.Count(out.String(), "\n")
}

// At verbosity 1 every decision line is written; controller-runtime's
// production logger writes the first 100 of a message in a second, then 1
// in 100.
func TestDecisionLinesAreNotSampled(t *testing.T) {
	if got := lines(t, zapcore.DebugLevel, 1, 350); got != 350 {
		t.Errorf("verbosity 1: %d of 350 decision lines written", got)
	}
	if got := lines(t, zapcore.Level(-2), 1, 350); got != 350 {
		t.Errorf("verbosity 2: %d of 350 decision lines written", got)
	}
}

// At the default level, the lines there are (errors, start-up) are
// sampled as controller-runtime samples them.
func TestInfoLevelSamplesAsControllerRuntime(t *testing.T) {
	if got := lines(t, zapcore.InfoLevel, 0, 350); got >= 350 || got < 100 {
		t.Errorf("info level: %d of 350 identical lines written, want controller-runtime's sampling (100, then 1 in 100)", got)
	}
	if got := lines(t, zapcore.InfoLevel, 1, 10); got != 0 {
		t.Errorf("info level: %d decision lines written, want none", got)
	}
}
