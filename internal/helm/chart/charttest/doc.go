// Package charttest builds Helm chart archives in memory, for tests.
// It also serves them, on 127.0.0.1 only: a Helm repository (index.yaml
// and archives, over HTTP or TLS) and an OCI registry, so fetch and
// controller tests run offline. Helm is Helm's own SDK acting as the
// `helm` CLI against a test cluster (install, upgrade, history, status).
//
// Usage:
//
//	archive := charttest.Archive("demo", "1.2.3", map[string]string{"templates/cm.yaml": cm})
//	repo := charttest.NewRepo()
//	defer repo.Close()
//	archiveURL := repo.Add(archive) // repo.URL() is the repository
//	reg := charttest.NewRegistry()
//	defer reg.Close()
//	ref := reg.Push("charts", archive) // oci://<host>/charts/demo, tagged 1.2.3
//	helm := charttest.NewHelm(t, restConfig, ns)
//	helm.Install("web", archive, values) // as `helm install web` does
//
// Files:
//
//	charttest.go  Archive, ConfigMapChart: chart archives built in memory
//	helm.go       Helm: Helm's SDK as the helm CLI runs it (Install, Upgrade, History, Deployed)
//	oci.go        Registry: an in-memory OCI registry, and Push
//	repo.go       Repo: a Helm repository (NewRepo, NewTLSRepo), and Add
package charttest
