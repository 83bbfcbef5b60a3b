package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cli"
	"github.com/steward-oam/steward/internal/cluster"
	"github.com/steward-oam/steward/internal/testcp"
)

// run executes a root command holding the read-only commands, as the
// binary would, and returns what it printed.
func run(t *testing.T, args ...string) string {
	t.Helper()
	root := &cobra.Command{Use: "steward", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(newVersionCommand(), newLsCommand(), newStatusCommand(), newTreeCommand(), newClusterCommand())
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("steward %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

func TestReadCommands_FlagsAndCompletionFromTheCluster(t *testing.T) {
	ctx := context.Background()
	plane := testcp.StartT(t, testcp.Options{CRDDirectoryPaths: []string{filepath.Join("..", "..", "config", "crd")}}, "hub")[0]
	hub, err := cli.NewClient(plane.Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"shop", cluster.DefaultNamespace} {
		if err := hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"cart", "catalog", "web"} {
		app := &v1beta1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name},
			Spec: v1beta1.ApplicationSpec{Components: []v1beta1.ApplicationComponent{{Name: name, Type: "webservice"}}}}
		if err := hub.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	secret := cluster.NewSecret(cluster.DefaultNamespace, "eu-1", nil, "", cluster.Credentials{Endpoint: "https://127.0.0.1:1", Token: "t"})
	if err := hub.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	kc := plane.KubeconfigPath

	// Completion goes through cobra's __complete with the connection flags
	// given before the word, as shells call it.
	got := run(t, "__complete", "status", "--kubeconfig", kc, "-n", "shop", "ca")
	if !strings.HasPrefix(got, "cart\ncatalog\n:4\n") {
		t.Errorf("completing status ca:\n%s", got)
	}
	if got := run(t, "__complete", "tree", "--kubeconfig", kc, "-n", "shop", "w"); !strings.HasPrefix(got, "web\n:4\n") {
		t.Errorf("completing tree w:\n%s", got)
	}
	if got := run(t, "__complete", "cluster", "detach", "--kubeconfig", kc, ""); !strings.HasPrefix(got, "eu-1\n:4\n") {
		t.Errorf("completing cluster detach (local cannot be detached):\n%s", got)
	}
	if got := run(t, "__complete", "ls", "-o", ""); !strings.HasPrefix(got, "table\nwide\nyaml\njson\nname\n:4\n") {
		t.Errorf("completing ls -o:\n%s", got)
	}

	// The connection flags reach the commands.
	if got := run(t, "ls", "--kubeconfig", kc, "-n", "shop", "-o", "name"); got != "application.core.oam.dev/cart\napplication.core.oam.dev/catalog\napplication.core.oam.dev/web\n" {
		t.Errorf("ls -n shop -o name = %q", got)
	}
	if got := run(t, "list", "--kubeconfig", kc, "-A"); !strings.HasPrefix(got, "NAMESPACE") || !strings.Contains(got, "catalog") {
		t.Errorf("list -A:\n%s", got)
	}
	if got := run(t, "completion", "bash"); !strings.Contains(got, "__start_steward") {
		t.Errorf("completion bash prints no script:\n%.200s", got)
	}
	if got := run(t, "version", "-o", "json"); !strings.Contains(got, `"goVersion"`) {
		t.Errorf("version -o json:\n%s", got)
	}
}
