//go:build tools

// Package tools pins KubeVela's CLI, built unchanged from its source into
// bin/vela by hack/install-vela.sh for `make test-vela`.
package tools

import _ "github.com/oam-dev/kubevela/references/cmd/cli"
