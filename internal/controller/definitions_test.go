package controller

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/steward-oam/steward/internal/localcp"
)

// installTestDefinitions installs testdata/definitions.yaml into ns, the
// same way `steward dev` installs the built-in ones.
func installTestDefinitions(t testing.TB, ns string) {
	t.Helper()
	if _, err := localcp.ApplyDefinitions(context.Background(), testClient, filepath.Join("testdata", "definitions"), ns); err != nil {
		t.Fatalf("installing test definitions: %v", err)
	}
}
