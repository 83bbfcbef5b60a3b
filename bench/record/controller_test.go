package record

import (
	"reflect"
	"testing"
)

func TestParseController_NeedsANameAndTheMetricsPlaceholder(t *testing.T) {
	c, err := ParseController("steward = bin/steward controller --metrics-addr={metrics-addr}")
	if err != nil || c.Name != "steward" || c.Command != "bin/steward controller --metrics-addr={metrics-addr}" {
		t.Errorf("ParseController = %+v, %v", c, err)
	}
	for _, bad := range []string{"", "steward", "=bin/x {metrics-addr}", "steward=", "steward=bin/steward controller"} {
		if _, err := ParseController(bad); err == nil {
			t.Errorf("ParseController(%q) succeeded, want an error", bad)
		}
	}
}

func TestControllerArgs_FillsPlaceholdersAndSplitsLikeAShell(t *testing.T) {
	c := Controller{Name: "x", Command: `bin/x --metrics-addr={metrics-addr} --pprof-addr={pprof-addr} --qps={qps} --burst {burst} --empty= --quoted "a b" --none ''`}
	got, err := c.Args("127.0.0.1:9", "127.0.0.1:10", 150.5, 300)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"bin/x", "--metrics-addr=127.0.0.1:9", "--pprof-addr=127.0.0.1:10", "--qps=150.5", "--burst", "300", "--empty=", "--quoted", "a b", "--none", ""}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Args = %q, want %q", got, want)
	}
	if _, err := (Controller{Command: `bin/x "open`}).Args("", "", 1, 1); err == nil {
		t.Errorf("unterminated quote accepted")
	}
	if _, err := (Controller{Command: "  "}).Args("", "", 1, 1); err == nil {
		t.Errorf("empty command accepted")
	}
}
