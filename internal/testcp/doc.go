// Package testcp starts several real Kubernetes control planes (envtest's
// etcd and kube-apiserver, each on its own loopback port) for tests that
// need a hub and spoke clusters.
//
// Usage:
//
//	planes := testcp.StartT(t, testcp.Options{CRDDirectoryPaths: []string{"../../config/crd"}},
//		"hub", "spoke-1", "spoke-2")
//	hub, spoke1 := planes[0], planes[1]
//	// spoke1.Config: system:masters with a client certificate
//	// spoke1.KubeconfigPath: the same credentials, for steward cluster join
//	// spoke1.TokenKubeconfigPath: a cluster-admin service account token
//	_ = planes[2].Stop() // the cluster goes away: connection refused
//
// Implementation notes: the binaries come from KUBEBUILDER_ASSETS (bin/k8s,
// built by make tools). Planes start concurrently to save wall time; each
// costs about 200MB and a few CPU-seconds to start. The token is issued by
// the TokenRequest API for a service account bound to cluster-admin, so
// both of KubeVela's credential types can be exercised against real API
// servers. The package is a test helper: it imports testing and belongs in
// tests only.
//
// Files:
//
//	testcp.go  Options, Plane, StartT and Start: control planes with kubeconfigs for hub and spokes
package testcp
