package cli

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/boundary"
	"github.com/steward-oam/steward/internal/cueeval"
	"github.com/steward-oam/steward/internal/helm/fetch"
	"github.com/steward-oam/steward/internal/helm/release"
	"github.com/steward-oam/steward/internal/render"
)

// chartActions carries out vela/helm's #Render for the CLI's renders. A
// chart source that is a path on this machine (a .tgz or a chart
// directory) is read from it; offline (hub nil) nothing else is, and
// valuesFrom cannot be read. Connected, charts are fetched as the
// controller fetches them and valuesFrom is read with the user's own
// credentials.
func chartActions(ctx context.Context, hub client.Reader, kubeVersion string) func(string, *v1beta1.Application, *render.ActionsError) ([]cueeval.ActionResult, error) {
	p := &release.Provider{Local: true}
	if hub != nil {
		p.Fetcher = fetch.New(fetch.Options{})
		p.Wait = -1
	}
	return func(clusterName string, app *v1beta1.Application, need *render.ActionsError) ([]cueeval.ActionResult, error) {
		var out []cueeval.ActionResult
		for _, a := range need.Actions {
			if a.Provider != "helm" || a.Do != "render" {
				return nil, fmt.Errorf("component %q: the %s.%s action at %s is not one a component may use", need.Component, a.Provider, a.Do, a.Path)
			}
			// The user's own credentials: their RBAC is the boundary.
			prepared, err := p.Prepare(ctx, hub, boundary.Boundary{Namespace: app.Namespace}, a.Params, kubeVersion)
			if err != nil {
				return nil, fmt.Errorf("component %q: %w", need.Component, err)
			}
			out = append(out, cueeval.ActionResult{Path: a.Path, Chart: prepared.Action})
		}
		return out, nil
	}
}
