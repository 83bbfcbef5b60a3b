package placement

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/steward-oam/steward/api/v1beta1"
)

// topologySpec is the topology policy's properties, as KubeVela defines
// them.
type topologySpec struct {
	// Clusters names the clusters to place on, in order.
	Clusters []string `json:"clusters,omitempty"`
	// ClusterLabelSelector selects the clusters that have all these labels;
	// {} selects every cluster.
	ClusterLabelSelector map[string]string `json:"clusterLabelSelector,omitempty"`
	// ClusterSelector is the deprecated name of ClusterLabelSelector.
	ClusterSelector map[string]string `json:"clusterSelector,omitempty"`
	// Namespace replaces the Application's namespace in those clusters.
	Namespace string `json:"namespace,omitempty"`
	// AllowEmpty accepts a topology that selects no cluster.
	AllowEmpty bool `json:"allowEmpty,omitempty"`
}

// parseTopology reads a topology policy strictly: an unknown field is a
// typo the user must hear about.
func parseTopology(p v1beta1.AppPolicy) (topologySpec, error) {
	var spec topologySpec
	if p.Properties == nil || len(p.Properties.Raw) == 0 {
		return spec, fmt.Errorf("topology policy %q has no properties: set clusters or clusterLabelSelector", p.Name)
	}
	dec := json.NewDecoder(bytes.NewReader(p.Properties.Raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&spec); err != nil {
		return spec, fmt.Errorf("topology policy %q: properties: %w", p.Name, err)
	}
	if spec.ClusterSelector != nil {
		if spec.ClusterLabelSelector != nil {
			return spec, fmt.Errorf("topology policy %q sets both clusterLabelSelector and its deprecated alias clusterSelector: keep clusterLabelSelector", p.Name)
		}
		spec.ClusterLabelSelector = spec.ClusterSelector
	}
	if spec.Clusters != nil && spec.ClusterLabelSelector != nil {
		return spec, fmt.Errorf("topology policy %q sets both clusters and clusterLabelSelector: use one", p.Name)
	}
	if spec.Namespace != "" {
		if errs := validation.IsDNS1123Label(spec.Namespace); len(errs) > 0 {
			return spec, fmt.Errorf("topology policy %q: namespace %q: %s", p.Name, spec.Namespace, strings.Join(errs, "; "))
		}
	}
	return spec, nil
}

// topologyPlacements returns the placements of one topology policy: the
// named clusters in order, or the clusters the selector matches in registry
// order, or the hub when neither is set.
func topologyPlacements(p v1beta1.AppPolicy, known registered) ([]Placement, error) {
	spec, err := parseTopology(p)
	if err != nil {
		return nil, err
	}
	var names []string
	switch {
	case spec.Clusters != nil:
		for _, n := range spec.Clusters {
			if _, ok := known.byName[n]; !ok && !v1beta1.IsLocalCluster(n) {
				return nil, fmt.Errorf("topology policy %q: cluster %q is not registered (registered: %s)", p.Name, n, known.names())
			}
			names = append(names, n)
		}
		if len(names) == 0 && !spec.AllowEmpty {
			return nil, fmt.Errorf("topology policy %q: clusters is empty; set allowEmpty: true to deliver nowhere", p.Name)
		}
	case spec.ClusterLabelSelector != nil:
		for _, c := range known.ordered {
			if hasLabels(c.Labels, spec.ClusterLabelSelector) {
				names = append(names, c.Name)
			}
		}
		if len(names) == 0 && !spec.AllowEmpty {
			return nil, fmt.Errorf("topology policy %q: no registered cluster has the labels %s; set allowEmpty: true to deliver nowhere",
				p.Name, formatLabels(spec.ClusterLabelSelector))
		}
	default:
		names = []string{v1beta1.ClusterLocal}
	}
	out := make([]Placement, 0, len(names))
	for _, n := range names {
		if v1beta1.IsLocalCluster(n) {
			n = ""
		}
		out = append(out, Placement{Cluster: n, Namespace: spec.Namespace})
	}
	return out, nil
}

func hasLabels(labels, selector map[string]string) bool {
	for k, v := range selector {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

func formatLabels(labels map[string]string) string {
	parts := make([]string, 0, len(labels))
	for k, v := range labels {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return "{" + strings.Join(parts, ",") + "}"
}

func (r registered) names() string {
	names := make([]string, len(r.ordered))
	for i, c := range r.ordered {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}
