package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/tracker"
)

// writeDiff writes one object's unified diff, from live to what applying
// would leave (nil: absent), in kubectl diff's layout; nothing when the
// two read the same. It reports whether they differ.
func writeDiff(w io.Writer, key tracker.Key, apiVersion string, before, after *unstructured.Unstructured) (bool, error) {
	a, err := diffYAML(before)
	if err != nil {
		return false, err
	}
	b, err := diffYAML(after)
	if err != nil {
		return false, err
	}
	if a == b {
		return false, nil
	}
	path := diffPath(key, apiVersion)
	text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: lines(a), B: lines(b),
		FromFile: "live/" + path, ToFile: "merged/" + path, Context: 3,
	})
	if err != nil {
		return false, fmt.Errorf("diffing %s: %w", key, err)
	}
	_, err = fmt.Fprintf(w, "diff -u -N live/%s merged/%s\n%s", path, path, text)
	return true, err
}

// lines splits text for difflib; no text is no line, so that a created
// or deleted object's hunk reads -0,0 or +0,0.
func lines(text string) []string {
	if text == "" {
		return nil
	}
	return difflib.SplitLines(text)
}

// diffPath names an object in diff headers:
// local/apps.v1.Deployment.default.web.
func diffPath(key tracker.Key, apiVersion string) string {
	parts := []string{strings.ReplaceAll(apiVersion, "/", "."), key.Kind}
	if key.Group != "" && !strings.HasPrefix(apiVersion, key.Group+"/") {
		parts[0] = key.Group + "." + parts[0]
	}
	if key.Namespace != "" {
		parts = append(parts, key.Namespace)
	}
	parts = append(parts, key.Name)
	return v1beta1.ClusterDisplay(key.Cluster) + "/" + strings.Join(parts, ".")
}

// diffYAML renders an object for a diff without the fields that change
// on every write or only repeat the manifest: managedFields,
// resourceVersion, generation and Steward's last-applied annotation.
func diffYAML(obj *unstructured.Unstructured) (string, error) {
	if obj == nil {
		return "", nil
	}
	obj = obj.DeepCopy()
	obj.SetManagedFields(nil)
	obj.SetResourceVersion("")
	obj.SetGeneration(0)
	if ann := obj.GetAnnotations(); ann != nil {
		delete(ann, v1beta1.AnnotationLastApplied)
		if len(ann) == 0 {
			ann = nil
		}
		obj.SetAnnotations(ann)
	}
	b, err := yaml.Marshal(obj.Object)
	if err != nil {
		return "", fmt.Errorf("encoding %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return string(b), nil
}
