/*
Copyright 2026 The Steward Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package localcp runs a throwaway Kubernetes control plane on loopback
// where Deployments get Pods that become Ready, so a new user can try
// Steward, and see webservice apps become Healthy, with nothing but Go:
// `make run` calls `steward dev`, which calls Start.
//
// # Usage
//
//	cp, err := localcp.Start(ctx, localcp.Options{Progress: os.Stdout})
//	if err != nil { ... }
//	defer cp.Stop()
//	// cp.Config talks to the plane as a system:masters user;
//	// cp.KubeconfigPath holds the same credentials for kubectl.
//
// # Implementation notes
//
// etcd and kube-apiserver are controller-runtime's envtest processes, the
// same our behaviour tests use, so `make run` and `make test` exercise
// identical binaries: bin/k8s, built from source by hack/install-tools.sh.
// Start adds what envtest leaves out, as kwokctl does for its binary
// runtime: kube-controller-manager (Deployments get ReplicaSets and Pods,
// namespaces are deleted, garbage is collected), kube-scheduler, and kwok
// playing the kubelet of one node, NodeName, moving its Pods through the
// stages of kwok-stages.yaml (Running and Ready at once, no image pulled,
// no container run). Each start generates the ServiceAccount signing key
// that the API server and kube-controller-manager share. The components
// listen on free loopback ports, authenticate as system:masters users of
// their own, and log to files in ControlPlane.LogDir.
//
// Start installs the CRDs from config/crd, the node, the definition
// namespace (vela-system), the definitions found in config/definitions and
// what KubeVela's own CLI reads from vela-system (config/kubevela: query
// views, version marker) with server-side apply as FieldOwner (see
// ApplyDefinitions), and reports
// each step to Options.Progress. State lives in a temp dir that Stop
// deletes along with the kubeconfig: each run starts empty.
//
// Stop terminates the components in the reverse order of their start. A
// process killed with SIGKILL cannot run Stop, and its components then
// outlive it.
//
// Files:
//
//	components.go   the components' command lines (etcd, kube-apiserver, kwok, ...) and their keys; kwok-stages.yaml
//	crds.go         installCRDs: config/crd applied and waited for until established
//	definitions.go  ApplyDefinitions: config/definitions server-side applied into a namespace
//	localcp.go      Start, Options and ControlPlane: the components started in order, the kubeconfig, Stop
//	node.go         the simulated node kwok plays, applied and waited for until schedulable
//	process.go      one component process, its log and health check; FreeLoopbackAddr
package localcp
