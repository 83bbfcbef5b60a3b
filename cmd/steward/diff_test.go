package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/steward-oam/steward/internal/cli"
	"github.com/steward-oam/steward/internal/localcp"
	"github.com/steward-oam/steward/internal/testcp"
)

// TestDiff_ExitsLikeKubectlDiff runs `steward diff` as a user does: 1 when
// applying would change something, 2 when it cannot tell.
func TestDiff_ExitsLikeKubectlDiff(t *testing.T) {
	plane := testcp.StartT(t, testcp.Options{CRDDirectoryPaths: []string{filepath.Join("..", "..", "config", "crd")}}, "hub")[0]
	hub, err := cli.NewClient(plane.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := localcp.ApplyDefinitions(context.Background(), hub, filepath.Join("..", "..", "config", "definitions"), "vela-system"); err != nil {
		t.Fatal(err)
	}
	app := filepath.Join(t.TempDir(), "app.yaml")
	if err := os.WriteFile(app, []byte(`apiVersion: core.oam.dev/v1beta1
kind: Application
metadata: {name: shop}
spec:
  components:
    - {name: web, type: worker, properties: {image: "web:1"}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, string, int) {
		root := newRootCommand()
		var out, errOut bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&errOut)
		root.SetArgs(append([]string{"diff", "--kubeconfig", plane.KubeconfigPath}, args...))
		code := 0
		if err := root.Execute(); err != nil {
			code = exitCode(err)
		}
		return out.String(), errOut.String(), code
	}

	out, errOut, code := run("-f", app, "-n", "prod")
	if code != 1 || !strings.Contains(out, "+++ merged/local/apps.v1.Deployment.prod.web\n") || !strings.Contains(errOut, "1 to create, 0 to patch, 0 to delete") {
		t.Errorf("new app: exit %d, want 1; stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if strings.Contains(errOut, "Error:") {
		t.Errorf("differences are not an error: %s", errOut)
	}
	if _, errOut, code := run("-f", filepath.Join(t.TempDir(), "missing.yaml")); code != 2 || !strings.Contains(errOut, "missing.yaml") {
		t.Errorf("missing file: exit %d, want 2; stderr: %s", code, errOut)
	}
	if _, _, code := run("--no-such-flag"); code != 2 {
		t.Errorf("bad flag: exit %d, want 2", code)
	}
}
