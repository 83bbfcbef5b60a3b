package release

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The helmchart definition names the outputs that hold the chart's objects
// with OutputPrefix: the controller builds the release's manifest from
// those outputs only, so a definition that named them otherwise would
// install releases with empty manifests.
func TestOutputPrefix_IsTheDefinitions(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "config", "definitions", "helmchart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if want := `"` + OutputPrefix + `\(i)": res`; !strings.Contains(string(b), want) {
		t.Fatalf("config/definitions/helmchart.yaml does not name its chart outputs %s<i> (want %s in its outputs)", OutputPrefix, want)
	}
	if !IsOutput(OutputPrefix+"3") || IsOutput("helm-release") {
		t.Fatal("IsOutput does not tell the chart's outputs from the rest")
	}
}
