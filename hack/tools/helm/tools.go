//go:build tools

// Package tools pins helm, which renders and lints charts/steward.
package tools

import _ "helm.sh/helm/v3/cmd/helm"
