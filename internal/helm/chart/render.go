package chart

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	releasev1 "helm.sh/helm/v4/pkg/release/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// MaxArchiveBytes is the largest chart archive Render loads.
const MaxArchiveBytes = 10 << 20

// Options are how a chart is rendered: KubeVela's helmchart release and
// options.
type Options struct {
	// ReleaseName and Namespace are the release's; a namespaced object
	// the chart leaves without a namespace goes to Namespace.
	ReleaseName string `json:"releaseName"`
	Namespace   string `json:"namespace"`
	// IncludeCRDs returns the chart's crds/ directory in Rendered.CRDs,
	// apart from its objects: as Helm does, they are created when missing,
	// never upgraded nor deleted.
	IncludeCRDs bool `json:"includeCRDs,omitempty"`
	// KeepTests delivers the chart's test hooks (KubeVela's skipTests:
	// false); other hooks are never delivered, they are listed in
	// Rendered.Hooks.
	KeepTests bool `json:"keepTests,omitempty"`
	// KubeVersion is the target cluster's version (.Capabilities); empty
	// is Helm's default.
	KubeVersion string `json:"kubeVersion,omitempty"`
	// Upgrade renders as an upgrade (.Release.IsUpgrade) of Revision.
	Upgrade  bool `json:"upgrade,omitempty"`
	Revision int  `json:"revision,omitempty"`
}

// Rendered is what a chart renders to.
type Rendered struct {
	// Chart and Version name the chart.
	Chart   string `json:"chart"`
	Version string `json:"version"`
	// Objects are the chart's objects in Helm's install order.
	Objects []map[string]any `json:"objects"`
	// CRDs are the CustomResourceDefinitions of the chart's crds/
	// directories (its dependencies' included), when Options.IncludeCRDs.
	CRDs []map[string]any `json:"crds,omitempty"`
	// Notes are the chart's rendered NOTES.txt.
	Notes string `json:"notes,omitempty"`
	// Hooks are the hooks the chart declares that Steward does not run,
	// as "Kind/name (events)".
	Hooks []string `json:"hooks,omitempty"`
}

// Error is a chart that cannot be loaded or rendered with its values.
type Error struct{ Err error }

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Load reads a chart archive (.tgz).
func Load(archive []byte) (*chartv2.Chart, error) {
	if len(archive) > MaxArchiveBytes {
		return nil, &Error{fmt.Errorf("the chart archive is %d bytes, more than the %d allowed", len(archive), MaxArchiveBytes)}
	}
	c, err := loader.LoadArchive(bytes.NewReader(archive))
	if err != nil {
		return nil, &Error{fmt.Errorf("the chart archive does not load: %w", err)}
	}
	return c, nil
}

// Render renders a chart archive with values as `helm template` does
// (client side: no cluster is read, .Capabilities are Helm's defaults
// with the given Kubernetes version), and returns its objects.
func Render(archive []byte, values map[string]any, o Options) (*Rendered, error) {
	c, err := Load(archive)
	if err != nil {
		return nil, err
	}
	return RenderChart(c, values, o)
}

// RenderChart is Render of a loaded chart.
func RenderChart(c *chartv2.Chart, values map[string]any, o Options) (*Rendered, error) {
	install := action.NewInstall(&action.Configuration{})
	install.ReleaseName = o.ReleaseName
	install.Namespace = o.Namespace
	install.DryRunStrategy = action.DryRunClient
	install.Replace = true
	install.IsUpgrade = o.Upgrade
	if o.KubeVersion != "" {
		kv, err := common.ParseKubeVersion(o.KubeVersion)
		if err == nil {
			install.KubeVersion = kv
		}
	}
	if values == nil {
		values = map[string]any{}
	}
	r, err := install.Run(c, values)
	if err != nil {
		return nil, &Error{fmt.Errorf("chart %s-%s does not render: %w", c.Name(), c.Metadata.Version, err)}
	}
	rel, ok := r.(*releasev1.Release)
	if !ok {
		return nil, &Error{errors.New("the chart rendered to an unknown release type")}
	}
	out := &Rendered{Chart: c.Name(), Version: c.Metadata.Version, Notes: rel.Info.Notes}
	objs, err := decode(rel.Manifest)
	if err != nil {
		return nil, &Error{fmt.Errorf("chart %s-%s renders objects that do not parse: %w", c.Name(), c.Metadata.Version, err)}
	}
	for _, h := range rel.Hooks {
		if isTest(h) {
			if o.KeepTests {
				more, err := decode(h.Manifest)
				if err != nil {
					return nil, &Error{fmt.Errorf("chart %s-%s: test %s does not parse: %w", c.Name(), c.Metadata.Version, h.Path, err)}
				}
				objs = append(objs, more...)
			}
			continue
		}
		var events []string
		for _, e := range h.Events {
			events = append(events, string(e))
		}
		out.Hooks = append(out.Hooks, fmt.Sprintf("%s/%s (%s)", h.Kind, h.Name, strings.Join(events, ",")))
	}
	for _, obj := range objs {
		if o.Namespace != "" && unstructuredNamespace(obj) == "" && !ClusterScoped(kindOf(obj)) {
			setNamespace(obj, o.Namespace)
		}
	}
	out.Objects = ordered(objs)
	if o.IncludeCRDs {
		for _, crd := range c.CRDObjects() {
			docs, err := decode(string(crd.File.Data))
			if err != nil {
				return nil, &Error{fmt.Errorf("chart %s-%s: %s does not parse: %w", c.Name(), c.Metadata.Version, crd.Name, err)}
			}
			for _, d := range docs {
				if kindOf(d) != "CustomResourceDefinition" {
					return nil, &Error{fmt.Errorf("chart %s-%s: %s holds a %s; crds/ may hold CustomResourceDefinitions only", c.Name(), c.Metadata.Version, crd.Name, kindOf(d))}
				}
				out.CRDs = append(out.CRDs, d)
			}
		}
	}
	return out, nil
}

func isTest(h *releasev1.Hook) bool {
	return slices.Contains(h.Events, releasev1.HookTest)
}

// decode parses a multi-document YAML manifest.
func decode(manifest string) ([]map[string]any, error) {
	var out []map[string]any
	dec := kyaml.NewYAMLOrJSONDecoder(strings.NewReader(manifest), 4096)
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if len(obj) == 0 {
			continue
		}
		if _, ok := obj["kind"].(string); !ok {
			return nil, fmt.Errorf("an object without a kind: %v", truncate(fmt.Sprint(obj), 80))
		}
		out = append(out, obj)
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

func kindOf(obj map[string]any) string { k, _ := obj["kind"].(string); return k }

func unstructuredNamespace(obj map[string]any) string {
	return (&unstructured.Unstructured{Object: obj}).GetNamespace()
}

func setNamespace(obj map[string]any, ns string) {
	(&unstructured.Unstructured{Object: obj}).SetNamespace(ns)
}

// ClusterScoped reports whether a kind is one of Kubernetes' built-in
// cluster-scoped kinds. It is the offline answer; with a cluster, its
// REST mapper decides (the controller drops the namespace of a
// cluster-scoped object whatever its kind).
func ClusterScoped(kind string) bool {
	switch kind {
	case "CustomResourceDefinition", "Namespace", "ClusterRole", "ClusterRoleBinding",
		"PersistentVolume", "StorageClass", "VolumeAttachment", "CSIDriver", "CSINode",
		"PriorityClass", "RuntimeClass", "IngressClass", "MutatingWebhookConfiguration",
		"ValidatingWebhookConfiguration", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
		"APIService", "FlowSchema", "PriorityLevelConfiguration", "Node":
		return true
	}
	return false
}

// ordered puts CRDs first, then namespaces, then the rest in Helm's
// order, as they must be applied.
func ordered(objs []map[string]any) []map[string]any {
	rank := func(o map[string]any) int {
		switch kindOf(o) {
		case "CustomResourceDefinition":
			return 0
		case "Namespace":
			return 1
		}
		return 2
	}
	slices.SortStableFunc(objs, func(a, b map[string]any) int { return rank(a) - rank(b) })
	return objs
}
