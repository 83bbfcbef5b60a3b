//go:build tools

// Package tools pins the Kubernetes control plane binaries: kube-apiserver
// for envtest and `steward dev`, kube-controller-manager and kube-scheduler
// for `steward dev`. One module builds all three, so they share a version.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
