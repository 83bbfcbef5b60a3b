package render_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/steward-oam/steward/internal/cli"
	"github.com/steward-oam/steward/internal/render"
)

var update = flag.Bool("update", false, "rewrite testdata/*/expected.yaml from the current output")

// TestGolden renders each testdata/<case>/app.yaml with the built-in
// definitions in config/definitions and compares the YAML byte for byte.
func TestGolden(t *testing.T) {
	defs, err := cli.LoadDefinitions(filepath.Join("..", "..", "config", "definitions"))
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := filepath.Glob(filepath.Join("testdata", "*", "app.yaml"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	r := render.NewRenderer()
	for _, appFile := range dirs {
		dir := filepath.Dir(appFile)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			app, err := cli.LoadApplication(appFile)
			if err != nil {
				t.Fatal(err)
			}
			res, err := r.Render(app, defs, render.AppContext{AppRevision: app.Name + "-v1", AppRevisionNum: 1})
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := cli.WriteObjects(&got, cli.Objects(res)); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join(dir, "expected.yaml")
			if *update {
				if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestGolden -update)", err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("%s differs (run go test -run TestGolden -update and review the diff)\n--- got\n%s", golden, got.String())
			}
		})
	}
}
