package facts

import (
	"encoding/json"

	"github.com/steward-oam/steward/internal/helm/release"
)

// HelmRelease is one release a version delivers.
type HelmRelease struct {
	Cluster     string          `json:"cluster,omitempty"`
	Component   string          `json:"component"`
	Name        string          `json:"name"`
	Namespace   string          `json:"namespace"`
	Revision    int             `json:"revision,omitempty"`
	Fingerprint string          `json:"fingerprint"`
	Params      json.RawMessage `json:"params"`
	// AppNamespace is the namespace the placement rendered into.
	AppNamespace string `json:"appNamespace"`

	// Prepared is the chart and values the render prepared, Manifest and
	// Notes what the chart rendered: known only in the pass that renders.
	Prepared *release.Prepared `json:"-"`
	Manifest string            `json:"-"`
	Notes    string            `json:"-"`
}
