package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/steward-oam/steward/internal/cli"
	"github.com/steward-oam/steward/internal/render"
)

func TestRender_PrintsObjectsAsYAMLDocuments(t *testing.T) {
	dir := t.TempDir()
	appFile := filepath.Join(dir, "app.yaml")
	writeFile(t, appFile, `apiVersion: core.oam.dev/v1beta1
kind: Application
metadata: {name: shop}
spec:
  components:
    - name: web
      type: webservice
      properties: {image: nginx, ports: [{port: 80, expose: true}]}
      traits:
        - type: scaler
          properties: {replicas: 2}
`)
	var out bytes.Buffer
	err := cli.Render(cli.RenderOptions{
		DefinitionPaths: []string{filepath.Join("..", "..", "config", "definitions")},
		AppFile:         appFile, ClusterVersion: "v1.30", Out: &out,
	})
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(out.String(), "---\n")
	if len(docs) != 2 || !strings.Contains(docs[0], "kind: Deployment") || !strings.Contains(docs[1], "kind: Service") {
		t.Fatalf("want a Deployment then a Service, got\n%s", out.String())
	}
	if !strings.Contains(docs[0], "replicas: 2") || !strings.Contains(docs[0], "namespace: default") {
		t.Errorf("want replicas 2 in namespace default, got\n%s", docs[0])
	}
}

func TestRender_ReportsWhatToFix(t *testing.T) {
	dir := t.TempDir()
	appFile := filepath.Join(dir, "app.yaml")
	writeFile(t, appFile, `apiVersion: core.oam.dev/v1beta1
kind: Application
metadata: {name: shop, namespace: prod}
spec:
  components:
    - name: web
      type: webservice
      properties: {image: nginx}
      traits:
        - type: scaler
          properties: {replicas: "two"}
`)
	err := cli.Render(cli.RenderOptions{
		DefinitionPaths: []string{filepath.Join("..", "..", "config", "definitions")},
		AppFile:         appFile, Out: &bytes.Buffer{},
	})
	want := `render application prod/shop: component "web" trait "scaler": properties do not fit parameter: replicas: conflicting values "two" and int`
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

func TestLoadDefinitions_RejectsDuplicates(t *testing.T) {
	dir := t.TempDir()
	def := "apiVersion: core.oam.dev/v1beta1\nkind: TraitDefinition\nmetadata: {name: x}\nspec: {schematic: {cue: {template: 'patch: {}'}}}\n"
	writeFile(t, filepath.Join(dir, "a.yaml"), def+"---\n# comment only\n---\n"+def)
	if _, err := cli.LoadDefinitions(dir); err == nil || !strings.Contains(err.Error(), `TraitDefinition "x" is defined twice`) {
		t.Errorf("want a duplicate error, got %v", err)
	}
}

func TestParseClusterVersion(t *testing.T) {
	tests := []struct {
		in      string
		want    render.ClusterVersion
		wantErr bool
	}{
		{in: "", want: render.ClusterVersion{}},
		{in: "v1.30", want: render.ClusterVersion{Major: "1", Minor: "30", GitVersion: "v1.30"}},
		{in: "1.28.3", want: render.ClusterVersion{Major: "1", Minor: "28", GitVersion: "v1.28.3"}},
		{in: "v1", wantErr: true},
		{in: "vx.y", wantErr: true},
	}
	for _, tt := range tests {
		got, err := cli.ParseClusterVersion(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseClusterVersion(%q) = %+v, %v", tt.in, got, err)
		}
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
