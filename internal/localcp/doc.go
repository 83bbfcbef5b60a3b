/*
Copyright 2026 The Steward Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package localcp runs a throwaway Kubernetes control plane (etcd and
// kube-apiserver on loopback) so a new user can try Steward with nothing but
// Go: `make run` calls `steward up`, which calls Start.
//
// # Usage
//
//	cp, err := localcp.Start(ctx, localcp.Options{})
//	if err != nil { ... }
//	defer cp.Stop()
//	// cp.Config talks to the plane as a system:masters user;
//	// cp.KubeconfigPath holds the same credentials for kubectl.
//
// # Implementation notes
//
// The plane is controller-runtime's envtest, the same one our behaviour tests
// use, so `make run` and `make test` exercise identical binaries: bin/k8s,
// built from source by hack/install-tools.sh. Start installs the CRDs from
// config/crd, creates the definition namespace (vela-system) and applies the definitions
// found in config/definitions (see ApplyDefinitions). State lives in a temp
// dir that Stop deletes along with the kubeconfig: each run starts empty.
//
// Stop terminates etcd and kube-apiserver. A process killed with SIGKILL
// cannot run Stop, and its etcd and kube-apiserver then outlive it.
package localcp
