// Package chart tests the Helm chart in charts/steward: it renders the chart
// with bin/helm (built by hack/install-helm.sh), checks that the chart's
// copies of CRDs, RBAC rules and definitions match config/, that the
// Deployment's flags are flags the controller accepts, and that a real
// kube-apiserver (envtest, KUBEBUILDER_ASSETS) accepts every rendered object
// in a server-side dry run, that values.schema.json rejects bad values and
// describes every value of values.yaml, and that the optional
// ServiceMonitor and PodDisruptionBudget select what they should.
//
// Without bin/helm or KUBEBUILDER_ASSETS the tests skip, except in CI (CI
// set), where they fail: a chart nobody renders is a chart that breaks
// unnoticed.
//
// Usage:
//
//	make tools   # bin/helm and bin/k8s
//	KUBEBUILDER_ASSETS=$PWD/bin/k8s go test ./test/chart/
package chart
