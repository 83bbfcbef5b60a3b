package release

import (
	"testing"

	"github.com/steward-oam/steward/internal/controller/controllertest"
)

// The release stories that touch Kubernetes run against one real
// kube-apiserver and etcd (controllertest), with RBAC: releases installed
// by Helm's own SDK as `helm install` does, taken over, repaired and
// refused across the boundary. The control plane starts with the first
// test that needs it.
func TestMain(m *testing.M) { controllertest.Main(m) }
