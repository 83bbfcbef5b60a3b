package cli

import (
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/steward-oam/steward/internal/render"
)

// RenderOptions are the inputs of `steward render`.
type RenderOptions struct {
	// DefinitionPaths are definition files or directories.
	DefinitionPaths []string
	// AppFile is the Application manifest.
	AppFile string
	// ClusterVersion is the Kubernetes version definitions see as
	// context.clusterVersion, like "v1.30"; empty means unknown.
	ClusterVersion string
	// Out receives the rendered objects.
	Out io.Writer
}

// Render renders an Application offline through the same code path as the
// controller and writes the objects as YAML documents: per component its
// workload, then its auxiliary objects in render order.
func Render(o RenderOptions) error {
	if len(o.DefinitionPaths) == 0 {
		return fmt.Errorf("no definitions given: pass -d with a definitions file or directory")
	}
	if o.AppFile == "" {
		return fmt.Errorf("no application given: pass -f with an Application file")
	}
	cv, err := ParseClusterVersion(o.ClusterVersion)
	if err != nil {
		return err
	}
	defs, err := LoadDefinitions(o.DefinitionPaths...)
	if err != nil {
		return err
	}
	app, err := LoadApplication(o.AppFile)
	if err != nil {
		return err
	}
	res, err := render.NewRenderer().Render(app, defs, render.AppContext{ClusterVersion: cv})
	if err != nil {
		return fmt.Errorf("render application %s/%s: %w", app.Namespace, app.Name, err)
	}
	return WriteObjects(o.Out, Objects(res))
}

// Objects flattens a render result in output order.
func Objects(res *render.Result) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, c := range res.Components {
		if c.Workload != nil {
			out = append(out, c.Workload)
		}
		for _, a := range c.Auxiliaries {
			out = append(out, a.Object)
		}
	}
	return out
}

// WriteObjects writes objects as `---`-separated YAML documents.
func WriteObjects(w io.Writer, objs []*unstructured.Unstructured) error {
	for i, obj := range objs {
		b, err := yaml.Marshal(obj.Object)
		if err != nil {
			return fmt.Errorf("encode %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// ParseClusterVersion reads "v1.30", "1.30" or "v1.30.2" into a
// render.ClusterVersion; empty is unknown.
func ParseClusterVersion(s string) (render.ClusterVersion, error) {
	if s == "" {
		return render.ClusterVersion{}, nil
	}
	parts := strings.Split(strings.TrimPrefix(s, "v"), ".")
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		return render.ClusterVersion{}, fmt.Errorf("cluster version %q: want vMAJOR.MINOR, like v1.30", s)
	}
	for _, p := range parts[:2] {
		if strings.Trim(p, "0123456789") != "" {
			return render.ClusterVersion{}, fmt.Errorf("cluster version %q: want vMAJOR.MINOR, like v1.30", s)
		}
	}
	git := s
	if !strings.HasPrefix(git, "v") {
		git = "v" + git
	}
	return render.ClusterVersion{Major: parts[0], Minor: parts[1], GitVersion: git}, nil
}
