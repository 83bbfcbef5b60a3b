package testcp_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/internal/testcp"
)

func TestStartT_BothKubeconfigsReachThePlane(t *testing.T) {
	planes := testcp.StartT(t, testcp.Options{}, "solo")
	p := planes[0]
	for _, path := range []string{p.KubeconfigPath, p.TokenKubeconfigPath} {
		cfg, err := clientcmd.BuildConfigFromFlags("", path)
		if err != nil {
			t.Fatalf("loading %s: %v", path, err)
		}
		c, err := client.New(cfg, client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var nss corev1.NamespaceList
		if err := c.List(context.Background(), &nss); err != nil {
			t.Fatalf("listing namespaces with %s: %v", path, err)
		}
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
}
