package render

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cueeval"
)

// Definitions is the set of definitions an Application renders with. The
// caller resolves them (the controller from the API server, the CLI from
// files); render never reads a cluster.
type Definitions struct {
	Components map[string]*v1beta1.ComponentDefinition
	Traits     map[string]*v1beta1.TraitDefinition
	Policies   map[string]*v1beta1.PolicyDefinition
	// NoRevisions says pinned types (webservice@v2) were not looked up:
	// definition revisions are turned off.
	NoRevisions bool
}

// ClusterVersion is context.clusterVersion. Empty fields mean unknown, as
// when no cluster is reachable.
type ClusterVersion struct {
	Major      string
	Minor      string
	GitVersion string
}

// AppContext is the application-level part of the CUE `context`.
type AppContext struct {
	AppRevision    string
	AppRevisionNum int64
	PublishVersion string
	ClusterVersion ClusterVersion
	// DeferPostDispatch leaves traits of stage PostDispatch out of the
	// render: the controller renders them once the workload is dispatched
	// and healthy, with the live workload as context.output
	// (RenderPostDispatch). Offline renders (steward render, diff) keep
	// them, over the rendered workload, as KubeVela's dry-run does.
	DeferPostDispatch bool
	// Actions are, by component name, the results of the provider
	// actions (vela/helm's #Render) its template asked for: see
	// ActionsError.
	Actions map[string][]cueeval.ActionResult
}

// ActionsError is a component whose template asks for provider actions
// to be carried out before it can render: vela/helm's #Render, whose
// chart must be fetched. Render is pure, so the caller carries them out
// (chart fetched, valuesFrom read) and renders again with the results in
// AppContext.Actions.
type ActionsError struct {
	Component string
	Type      string
	Actions   []cueeval.Action
}

func (e *ActionsError) Error() string {
	return fmt.Sprintf("component %q (type %q) needs %d provider action(s) carried out before it renders", e.Component, e.Type, len(e.Actions))
}

// Result is everything an Application renders to.
type Result struct {
	Components []Component
}

// Component is what one component rendered to: its workload (nil when the
// definition has no output) and auxiliary objects from the definition's
// outputs and from traits, in render order.
type Component struct {
	Name string
	Type string
	// ReplicaKey is the key of this copy of a component a replication
	// policy selects (several copies share the name); empty otherwise.
	ReplicaKey  string
	DependsOn   []string
	Workload    *unstructured.Unstructured
	Auxiliaries []Auxiliary
	// Charts are the Helm charts the component rendered.
	Charts []cueeval.ChartInfo
}

// Auxiliary is one object of `outputs`.
type Auxiliary struct {
	// Trait is the trait type that rendered the object; empty for the
	// component definition's own outputs.
	Trait string
	// Name is the key of the object in `outputs`.
	Name   string
	Object *unstructured.Unstructured
}
