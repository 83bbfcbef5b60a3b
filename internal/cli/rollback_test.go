package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/internal/cli"
)

func webApp(publishVersion, image string) string {
	return fmt.Sprintf(`apiVersion: core.oam.dev/v1beta1
kind: Application
metadata: {name: web, namespace: default, annotations: {app.oam.dev/publishVersion: %s}}
spec:
  components:
    - {name: web, type: worker, properties: {image: %q}}
`, publishVersion, image)
}

func TestHistoryAndRollback_ReturnToAnEarlierPublishedVersion(t *testing.T) {
	ctx := context.Background()
	hub := startDeliveryHub(t, true)
	hub.apply(t, webApp("alpha", "web:1"))
	hub.waitRevision(t, "web", "web-alpha")
	hub.apply(t, webApp("beta", "web:2"))
	hub.waitRevision(t, "web", "web-beta")
	waitImage(t, hub, "web:2")

	history := func(output string) string {
		t.Helper()
		var out bytes.Buffer
		if err := cli.History(ctx, hub.client, cli.HistoryOptions{Name: "web", Namespace: "default", Output: output, Out: &out}); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	current := func() map[string]bool {
		t.Helper()
		var list struct {
			Kind  string `json:"kind"`
			Items []struct {
				PublishVersion string `json:"publishVersion"`
				Current        bool   `json:"current"`
				Objects        int    `json:"objects"`
			} `json:"items"`
		}
		out := history("json")
		if err := json.Unmarshal([]byte(out), &list); err != nil || list.Kind != "List" || len(list.Items) != 2 {
			t.Fatalf("json history: want a List of two versions, got %v\n%s", err, out)
		}
		got := map[string]bool{}
		for _, v := range list.Items {
			if v.Objects != 1 {
				t.Errorf("version %s records %d objects, want its Deployment", v.PublishVersion, v.Objects)
			}
			got[v.PublishVersion] = v.Current
		}
		return got
	}

	table := history("")
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "REVISION") ||
		!strings.HasPrefix(lines[1], "web-alpha") || !strings.HasPrefix(lines[2], "web-beta") || !strings.Contains(lines[2], "yes") ||
		strings.Contains(lines[1], "yes") {
		t.Errorf("want a header, then alpha, then beta marked current:\n%s", table)
	}
	if wide := history("wide"); !strings.Contains(wide, "web.default.pv-alpha") || !strings.Contains(wide, "local") {
		t.Errorf("wide history lacks the trackers and clusters:\n%s", wide)
	}
	if got := current(); !got["beta"] || got["alpha"] {
		t.Errorf("current = %v, want beta", got)
	}

	_, err := cli.Rollback(ctx, hub.client, cli.RollbackOptions{Name: "web", Namespace: "default", To: "gamma"})
	if err == nil || err.Error() != `application default/web has no version "gamma" to roll back to; available: alpha` {
		t.Errorf("rollback to an unknown version: %v", err)
	}
	_, err = cli.Rollback(ctx, hub.client, cli.RollbackOptions{Name: "web", Namespace: "default", To: "beta"})
	if err == nil || !strings.Contains(err.Error(), `is at version "beta" already`) {
		t.Errorf("rollback to the current version: %v", err)
	}

	// diff previews the rollback: alpha's recorded manifest, not the spec.
	path := filepath.Join(t.TempDir(), "app.yaml")
	writeFile(t, path, webApp("alpha", "web:2"))
	var diff bytes.Buffer
	report, err := cli.Diff(ctx, hub.cfg, hub.client, cli.DiffOptions{AppFile: path, Out: &diff})
	if err != nil || len(report.Patched) != 1 || len(report.Created)+len(report.Deleted) > 0 ||
		!strings.Contains(diff.String(), "-      - image: web:2\n+      - image: web:1\n") {
		t.Errorf("diff of the rollback: %v %s\n%s", err, report.Summary(), diff.String())
	}

	res, err := cli.Rollback(ctx, hub.client, cli.RollbackOptions{Name: "web", Namespace: "default", To: "alpha"})
	if err != nil {
		t.Fatal(err)
	}
	if res.From != "beta" || res.To != "alpha" || res.Revision != "web-alpha" {
		t.Errorf("rollback = %+v", res)
	}
	// The controller applies alpha's recorded manifest again, although
	// the spec still says web:2.
	hub.waitRevision(t, "web", "web-alpha")
	waitImage(t, hub, "web:1")
	if got := current(); !got["alpha"] || got["beta"] {
		t.Errorf("after the rollback current = %v, want alpha", got)
	}
	// Forward again, by revision name.
	if _, err := cli.Rollback(ctx, hub.client, cli.RollbackOptions{Name: "web", Namespace: "default", To: "web-beta"}); err != nil {
		t.Fatal(err)
	}
	hub.waitRevision(t, "web", "web-beta")
	waitImage(t, hub, "web:2")

	// Versions named by generation cannot be returned to.
	hub.apply(t, "apiVersion: core.oam.dev/v1beta1\nkind: Application\nmetadata: {name: plain, namespace: default}\n"+
		"spec: {components: [{name: plain, type: worker, properties: {image: \"web:1\"}}]}\n")
	hub.waitRevision(t, "plain", "plain-v1")
	_, err = cli.Rollback(ctx, hub.client, cli.RollbackOptions{Name: "plain", Namespace: "default", To: "v1"})
	if err == nil || !strings.Contains(err.Error(), "no earlier published version to roll back to") {
		t.Errorf("rollback without published versions: %v", err)
	}
	_, err = cli.Rollback(ctx, hub.client, cli.RollbackOptions{Name: "nowhere", Namespace: "default", To: "v1"})
	if err == nil || err.Error() != "application default/nowhere not found" {
		t.Errorf("unknown application: %v", err)
	}
}

// waitImage waits until Deployment default/web runs image.
func waitImage(t *testing.T, hub deliveryHub, image string) {
	t.Helper()
	pollUntil(t, 60*time.Second, "Deployment web with image "+image, func() error {
		dep := &appsv1.Deployment{}
		if err := hub.client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "web"}, dep); err != nil {
			return err
		}
		if got := dep.Spec.Template.Spec.Containers[0].Image; got != image {
			return fmt.Errorf("image %s", got)
		}
		return nil
	})
}
