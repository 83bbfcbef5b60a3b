//go:build tools

// Package tools pins kwok, the simulated node of `steward dev`.
package tools

import _ "sigs.k8s.io/kwok/cmd/kwok"
