package cli

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/steward-oam/steward/internal/version"
)

func TestPrintVersion_EveryFormat(t *testing.T) {
	var text bytes.Buffer
	if err := PrintVersion(&text, ""); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Version:", "Commit:", "Go version: " + runtime.Version(), "Platform:"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text output lacks %q:\n%s", want, text.String())
		}
	}
	for format, unmarshal := range map[string]func([]byte, any) error{"json": json.Unmarshal, "yaml": func(b []byte, v any) error { return yaml.Unmarshal(b, v) }} {
		var out bytes.Buffer
		if err := PrintVersion(&out, format); err != nil {
			t.Fatal(err)
		}
		var got version.Info
		if err := unmarshal(out.Bytes(), &got); err != nil {
			t.Fatalf("%s output does not decode: %v\n%s", format, err, out.String())
		}
		if got != version.Get() {
			t.Errorf("%s output = %+v, want %+v", format, got, version.Get())
		}
	}
	if err := PrintVersion(&bytes.Buffer{}, "wide"); err == nil || !strings.Contains(err.Error(), "use one of yaml, json") {
		t.Errorf("unknown format: err = %v", err)
	}
}
