/*
Copyright 2026 The Steward Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package vela drives KubeVela's own CLI, built unchanged from its source
// (bin/vela, hack/install-vela.sh, pinned to v1.9.13 in hack/tools/vela),
// against Steward on the local control plane of `steward dev`
// (internal/localcp: etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler and a kwok node, with config/crd, config/definitions and
// config/kubevela installed), with `steward controller` as a child process.
// It runs the verbs a KubeVela user runs and checks what they print and
// what they change: `vela up`, `status --endpoint`, `status --pod`,
// `addon enable` of local addons that declare `system.vela`, `logs`, and
// with ApplicationRevisions `revision list`, `live-diff`, `workflow
// rollback` and `up --revision --publish-version`. The revision cases skip,
// naming the missing piece, while the cluster has no ApplicationRevision
// CRD or the controller writes no ApplicationRevisions.
//
// It is opt-in: without VELA_BIN every test skips, so `make test` does not
// build KubeVela (a cold build takes 20 minutes or more).
//
// Usage:
//
//	make test-vela      # builds bin/vela, bin/k8s, then runs this package
//	VELA_BIN=$PWD/bin/vela KUBEBUILDER_ASSETS=$PWD/bin/k8s go test -count=1 -v ./test/vela/
//
// Files (tests only):
//
//	main_test.go  TestMain (builds steward), the plane, the controller process and the vela runner
//	vela_test.go  TestVela: the verbs, in order, against one Application and two addons
package vela
