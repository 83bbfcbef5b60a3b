// Package dashboard tests `steward dashboard` in a real browser: headless
// Chromium (Debian's chromium package; .ci/run installs it) driven by
// chromedp, against a real kube-apiserver and etcd and a running Steward
// controller. It writes a screenshot of each page under _output/dashboard
// for docs/dashboard.md.
//
// Usage:
//
//	hack/install-browser.sh
//	KUBEBUILDER_ASSETS=$PWD/bin/k8s go test ./test/dashboard/
//	make bench-dashboard   # the list page over 10,000 Applications
package dashboard
