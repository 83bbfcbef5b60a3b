package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func ls(t *testing.T, d *delivered, o LsOptions) string {
	t.Helper()
	var out bytes.Buffer
	o.Out = &out
	if err := Ls(context.Background(), d.hub, o); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// fields splits the table's lines into cells.
func fields(table string) [][]string {
	var out [][]string
	for _, line := range strings.Split(strings.TrimSpace(table), "\n") {
		out = append(out, strings.Fields(line))
	}
	return out
}

func testLs(t *testing.T, d *delivered) {
	rows := fields(ls(t, d, LsOptions{Namespace: "default"}))
	if strings.Join(rows[0], " ") != "NAME PHASE HEALTHY COMPONENTS AGE" || len(rows) != 2 {
		t.Fatalf("table:\n%v", rows)
	}
	// No pods run in envtest: the webservice is unhealthy in both clusters.
	if got := strings.Join(rows[1][:4], " "); got != "shop unhealthy 2/4 frontend,config" {
		t.Errorf("shop row = %q", got)
	}

	wide := ls(t, d, LsOptions{AllNamespaces: true, Output: OutputWide})
	t.Logf("steward ls -A -o wide:\n%s", wide)
	rows = fields(wide)
	if strings.Join(rows[0], " ") != "NAMESPACE NAME PHASE HEALTHY COMPONENTS AGE VERSION CLUSTERS TRACKERS REASON" || len(rows) != 3 {
		t.Fatalf("wide table:\n%v", rows)
	}
	if got := strings.Join(rows[1][:5], " ") + " " + strings.Join(rows[1][6:], " "); got != "default shop unhealthy 2/4 frontend,config 2.0 local,spoke 3 Unhealthy" {
		t.Errorf("shop wide row = %q", got)
	}
	if got := strings.Join(rows[2][:5], " ") + " " + strings.Join(rows[2][6:], " "); got != "team-b blog running 1/1 posts generation 1 local 1" { // a first version: no component-revision tracker yet
		t.Errorf("blog wide row = %q", got)
	}

	if got := ls(t, d, LsOptions{AllNamespaces: true, Output: OutputName}); got != "application.core.oam.dev/shop\napplication.core.oam.dev/blog\n" {
		t.Errorf("-o name = %q", got)
	}
	var list struct {
		Kind  string `json:"kind"`
		Items []struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name          string `json:"name"`
				ManagedFields []any  `json:"managedFields"`
			} `json:"metadata"`
		} `json:"items"`
	}
	raw := ls(t, d, LsOptions{Namespace: "team-b", Output: OutputJSON})
	if err := json.Unmarshal([]byte(raw), &list); err != nil {
		t.Fatalf("-o json: %v\n%s", err, raw)
	}
	if len(list.Items) != 1 || list.Items[0].Metadata.Name != "blog" || list.Items[0].Kind != "Application" ||
		list.Items[0].APIVersion != "core.oam.dev/v1beta1" || list.Items[0].Metadata.ManagedFields != nil {
		t.Errorf("-o json = %+v", list)
	}
	if got := ls(t, d, LsOptions{Namespace: "team-b", Output: OutputYAML}); !strings.Contains(got, "name: blog") {
		t.Errorf("-o yaml:\n%s", got)
	}
	if got := ls(t, d, LsOptions{Namespace: "empty"}); got != "No applications found in namespace empty.\n" {
		t.Errorf("empty namespace: %q", got)
	}
	if err := Ls(context.Background(), d.hub, LsOptions{Namespace: "default", Output: "xml", Out: &bytes.Buffer{}}); err == nil || !strings.Contains(err.Error(), "table, wide, yaml, json, name") {
		t.Errorf("unknown format: %v", err)
	}
}
