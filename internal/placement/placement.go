package placement

import (
	"encoding/json"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/policy"
	"github.com/steward-oam/steward/internal/workflow"
)

const (
	// DefaultParallelism is a deploy step's parallelism when unset.
	DefaultParallelism = 5
	// implicitStep names the step used when the workflow has no deploy step.
	implicitStep = "deploy"
)

// Placement is one target of a deploy step: a cluster and, optionally, the
// namespace that replaces the Application's for namespaced objects.
type Placement struct {
	// Cluster is the registered cluster's name, "" for the hub: the same
	// spelling as tracker entries, so that existing entries of the hub keep
	// their key.
	Cluster string
	// Namespace overrides the Application's namespace; empty keeps it.
	Namespace string
}

// String renders a placement for messages: "local", "eu-1/prod".
func (p Placement) String() string {
	s := p.Cluster
	if s == "" {
		s = v1beta1.ClusterLocal
	}
	if p.Namespace != "" {
		s += "/" + p.Namespace
	}
	return s
}

// Step is one deploy step: its placements in order, and the override
// policies, in order, that shape the components it delivers.
type Step struct {
	// Name of the workflow step ("deploy" for the implicit step).
	Name string
	// Placements are distinct and ordered as the policies list them. An
	// empty list means the step delivers nothing (allowEmpty topologies).
	Placements []Placement
	// Overrides are the override policies of the step, in order.
	Overrides []v1beta1.AppPolicy
	// Replications are the replication policies of the step, in order:
	// applied after the overrides (Replicate).
	Replications []v1beta1.AppPolicy
	// Parallelism is the step's parallelism property (default 5).
	Parallelism int
	// ParallelismSet is whether the step sets parallelism: it then
	// bounds how many clusters are worked on at once.
	ParallelismSet bool
	// Object, for an apply-object step, is the object it delivers (to
	// its one placement) instead of the components; nil otherwise.
	Object *unstructured.Unstructured
	// fill, for an apply-component step taking inputs, sets them into
	// its component's spec (WithInputs).
	fill func(spec map[string]any) error
}

// Components returns the components the step delivers: the Application's
// with the step's overrides applied, then its replications (Replicate).
func (s Step) Components(app *v1beta1.Application) ([]v1beta1.ApplicationComponent, error) {
	comps, err := ApplyOverrides(app.Spec.Components, s.Overrides)
	if err != nil {
		return nil, fmt.Errorf("deploy step %q: %w", s.Name, err)
	}
	if err := s.fillInputs(comps); err != nil {
		return nil, err
	}
	for i := range comps {
		// Only a replication policy sets a key (KubeVela's field is not
		// part of its API); one written in the spec is ignored.
		comps[i].ReplicaKey = ""
	}
	if comps, err = Replicate(comps, s.Replications); err != nil {
		return nil, fmt.Errorf("deploy step %q: %w", s.Name, err)
	}
	return comps, nil
}

// deployProperties are the properties of a deploy step Steward reads;
// others (auto, ignoreTerraformComponent) are accepted and ignored.
type deployProperties struct {
	Policies       []string            `json:"policies,omitempty"`
	Parallelism    *int                `json:"parallelism,omitempty"`
	InlinePolicies []v1beta1.AppPolicy `json:"inlinePolicies,omitempty"`
}

// Resolve turns an Application's workflow and policies into deploy steps,
// in workflow order. Each deploy step (also inside step groups) places its
// components with the topology policies it names and shapes them with the
// override policies it names; a step without topology delivers to the hub.
// A workflow with an instruction Steward does not carry out is refused
// with a *workflow.UnsupportedError (workflow.Check). Without a workflow there
// is one implicit step with every topology and override policy of the
// Application, in the order they are listed. clusters are the registered
// clusters (local is always known). Errors name the step and the policy
// and are the user's to fix.
func Resolve(app *v1beta1.Application, clusters []Cluster) ([]Step, error) {
	wf := workflow.Of(app)
	if err := workflow.Check(wf); err != nil {
		return nil, err
	}
	for _, c := range app.Spec.Components {
		// Values the workflow passes between components: delivering
		// without them would apply what the user did not write.
		if len(c.Inputs) > 0 || len(c.Outputs) > 0 {
			return nil, &workflow.UnsupportedError{What: fmt.Sprintf("inputs and outputs of component %q (values passed between components)", c.Name)}
		}
	}
	byName := make(map[string]v1beta1.AppPolicy, len(app.Spec.Policies))
	for _, p := range app.Spec.Policies {
		if _, dup := byName[p.Name]; dup {
			return nil, fmt.Errorf("policy %q is defined twice", p.Name)
		}
		byName[p.Name] = p
	}
	known := knownClusters(clusters)
	deploys := deploySteps(wf)
	if len(deploys) == 0 && wf != nil && len(wf.Steps) > 0 {
		// A workflow of its own whose steps deliver no component (custom
		// steps alone: configs, webhooks) delivers none, as in KubeVela.
		return nil, nil
	}
	if len(deploys) == 0 {
		var selected []v1beta1.AppPolicy
		for _, p := range app.Spec.Policies {
			if p.Type == v1beta1.PolicyTypeTopology || p.Type == v1beta1.PolicyTypeOverride {
				selected = append(selected, p)
			}
		}
		step, err := resolveStep(implicitStep, selected, DefaultParallelism, known)
		if err != nil {
			return nil, err
		}
		return []Step{step}, nil
	}
	steps := make([]Step, 0, len(deploys))
	names := workflow.Namer{}
	for _, ws := range deploys {
		name := names.Name(ws)
		var step Step
		var err error
		switch ws.Type {
		case v1beta1.WorkflowStepTypeApplyObject:
			step, err = resolveApplyObject(name, ws, known)
		case v1beta1.WorkflowStepTypeApplyComponent:
			step, err = resolveApplyComponent(name, ws, app, known)
		default:
			step, err = resolveDeploy(name, ws, byName, known)
		}
		if err != nil {
			return nil, err
		}
		steps = append(steps, step)
	}
	if workflow.Generated(app) {
		// The steps generated per topology policy deliver each placement
		// once, in the first step that selects it, as the policies
		// together would: two topologies selecting one cluster do not
		// render the same objects twice.
		seen := map[Placement]bool{}
		for i := range steps {
			steps[i].Placements = slices.DeleteFunc(steps[i].Placements, func(p Placement) bool {
				dup := seen[p]
				seen[p] = true
				return dup
			})
		}
	}
	return steps, nil
}

// resolveDeploy places a deploy step with the policies it names.
func resolveDeploy(name string, ws v1beta1.WorkflowStepBase, byName map[string]v1beta1.AppPolicy, known registered) (Step, error) {
	props, err := parseDeploy(name, ws)
	if err != nil {
		return Step{}, err
	}
	selected, err := selectPolicies(name, props, byName)
	if err != nil {
		return Step{}, err
	}
	parallelism := DefaultParallelism
	if props.Parallelism != nil && *props.Parallelism > 0 {
		parallelism = *props.Parallelism
	}
	step, err := resolveStep(name, selected, parallelism, known)
	step.ParallelismSet = props.Parallelism != nil && *props.Parallelism > 0
	return step, err
}

// deploySteps returns the steps of a workflow that deliver, in workflow
// order, looking into step groups: deploy, apply-component and
// apply-object steps.
func deploySteps(wf *v1beta1.Workflow) []v1beta1.WorkflowStepBase {
	if wf == nil {
		return nil
	}
	delivers := workflow.Delivers
	var out []v1beta1.WorkflowStepBase
	for _, s := range wf.Steps {
		if delivers(s.Type) {
			out = append(out, s.WorkflowStepBase)
		}
		for _, sub := range s.SubSteps {
			if delivers(sub.Type) {
				out = append(out, sub)
			}
		}
	}
	return out
}

func parseDeploy(name string, ws v1beta1.WorkflowStepBase) (deployProperties, error) {
	var props deployProperties
	if ws.Properties == nil || len(ws.Properties.Raw) == 0 {
		return props, nil
	}
	if err := json.Unmarshal(ws.Properties.Raw, &props); err != nil {
		return props, fmt.Errorf("deploy step %q: properties: %w", name, err)
	}
	return props, nil
}

// applyComponentProperties are an apply-component step's properties.
type applyComponentProperties struct {
	Component string `json:"component"`
	Cluster   string `json:"cluster,omitempty"`
}

// resolveApplyComponent places an apply-component step: its component, in
// the Application's namespace of its cluster (the hub by default), as a
// deploy step with a topology of that cluster and an override selecting
// the component would.
func resolveApplyComponent(name string, ws v1beta1.WorkflowStepBase, app *v1beta1.Application, known registered) (Step, error) {
	var props applyComponentProperties
	if ws.Properties != nil && len(ws.Properties.Raw) > 0 {
		if err := json.Unmarshal(ws.Properties.Raw, &props); err != nil {
			return Step{}, &workflow.InvalidWorkflowError{Err: fmt.Errorf("step %q: properties: %w", name, err)}
		}
	}
	found := false
	for _, c := range app.Spec.Components {
		found = found || c.Name == props.Component
	}
	if !found {
		return Step{}, &workflow.InvalidWorkflowError{Err: fmt.Errorf("step %q: component %q is not one of spec.components", name, props.Component)}
	}
	target, err := stepCluster(name, props.Cluster, known)
	if err != nil {
		return Step{}, err
	}
	topology, _ := json.Marshal(map[string]any{"clusters": []string{target}})
	selector, _ := json.Marshal(map[string]any{"selector": []string{props.Component}})
	return resolveStep(name, []v1beta1.AppPolicy{
		{Name: name + "-cluster", Type: v1beta1.PolicyTypeTopology, Properties: &runtime.RawExtension{Raw: topology}},
		{Name: name + "-component", Type: v1beta1.PolicyTypeOverride, Properties: &runtime.RawExtension{Raw: selector}},
	}, DefaultParallelism, known)
}

// applyObjectProperties are an apply-object step's properties.
type applyObjectProperties struct {
	Value   map[string]any `json:"value"`
	Cluster string         `json:"cluster,omitempty"`
}

// resolveApplyObject places an apply-object step: its object, in its
// cluster (the hub by default); an object without a namespace goes to the
// Application's, as a component's would.
func resolveApplyObject(name string, ws v1beta1.WorkflowStepBase, known registered) (Step, error) {
	var props applyObjectProperties
	if ws.Properties != nil && len(ws.Properties.Raw) > 0 {
		if err := json.Unmarshal(ws.Properties.Raw, &props); err != nil {
			return Step{}, &workflow.InvalidWorkflowError{Err: fmt.Errorf("step %q: properties: %w", name, err)}
		}
	}
	obj := &unstructured.Unstructured{Object: props.Value}
	if props.Value == nil || obj.GetAPIVersion() == "" || obj.GetKind() == "" || obj.GetName() == "" {
		return Step{}, &workflow.InvalidWorkflowError{Err: fmt.Errorf("step %q: apply-object needs properties.value, an object with apiVersion, kind and metadata.name", name)}
	}
	target, err := stepCluster(name, props.Cluster, known)
	if err != nil {
		return Step{}, err
	}
	topology, _ := json.Marshal(map[string]any{"clusters": []string{target}})
	step, err := resolveStep(name, []v1beta1.AppPolicy{
		{Name: name + "-cluster", Type: v1beta1.PolicyTypeTopology, Properties: &runtime.RawExtension{Raw: topology}},
	}, DefaultParallelism, known)
	if err != nil {
		return Step{}, err
	}
	step.Object = obj
	return step, nil
}

// selectPolicies returns the policies a deploy step names, in its order,
// then its inline policies.
func selectPolicies(step string, props deployProperties, byName map[string]v1beta1.AppPolicy) ([]v1beta1.AppPolicy, error) {
	out := make([]v1beta1.AppPolicy, 0, len(props.Policies)+len(props.InlinePolicies))
	for _, n := range props.Policies {
		p, ok := byName[n]
		if !ok {
			return nil, fmt.Errorf("deploy step %q: policy %q is not defined in the application's policies", step, n)
		}
		out = append(out, p)
	}
	for i, p := range props.InlinePolicies {
		if p.Name == "" {
			p.Name = fmt.Sprintf("%s-inline-%s-%d", step, p.Type, i+1)
		}
		out = append(out, p)
	}
	return out, nil
}

// resolveStep places a step with its topology policies and checks its
// override policies. Other policy types are not placement's concern.
func resolveStep(name string, policies []v1beta1.AppPolicy, parallelism int, known registered) (Step, error) {
	step := Step{Name: name, Parallelism: parallelism, Placements: []Placement{}}
	seen := map[Placement]bool{}
	hasTopology := false
	for _, p := range policies {
		switch p.Type {
		case v1beta1.PolicyTypeTopology:
			hasTopology = true
			placements, err := topologyPlacements(p, known)
			if err != nil {
				return Step{}, err
			}
			for _, pl := range placements {
				if !seen[pl] {
					seen[pl] = true
					step.Placements = append(step.Placements, pl)
				}
			}
		case v1beta1.PolicyTypeOverride:
			if _, err := parseOverride(p); err != nil {
				return Step{}, err
			}
			step.Overrides = append(step.Overrides, p)
		case policy.TypeReplication:
			if _, err := parseReplication(p); err != nil {
				return Step{}, err
			}
			step.Replications = append(step.Replications, p)
		}
	}
	if !hasTopology {
		step.Placements = []Placement{{}}
	}
	return step, nil
}

// registered is the clusters placement may use: in the caller's order
// (local first when the caller left it out) and by name.
// stepCluster is the cluster an apply-component or apply-object step
// names, the hub when it names none.
func stepCluster(step, name string, known registered) (string, error) {
	if v1beta1.IsLocalCluster(name) {
		return v1beta1.ClusterLocal, nil
	}
	if _, ok := known.byName[name]; !ok {
		return "", fmt.Errorf("step %q: cluster %q is not registered (registered: %s)", step, name, known.names())
	}
	return name, nil
}

// Cluster is a cluster a topology policy may select: a registered
// cluster's name and labels (internal/cluster reads them from the cluster
// Secrets; placement reads nothing).
type Cluster struct {
	Name   string
	Labels map[string]string
}

type registered struct {
	ordered []Cluster
	byName  map[string]Cluster
}

func knownClusters(clusters []Cluster) registered {
	r := registered{byName: make(map[string]Cluster, len(clusters)+1)}
	for _, c := range clusters {
		c.Name = v1beta1.ClusterDisplay(c.Name)
		if _, dup := r.byName[c.Name]; dup {
			continue
		}
		r.byName[c.Name] = c
		r.ordered = append(r.ordered, c)
	}
	if _, ok := r.byName[v1beta1.ClusterLocal]; !ok {
		local := Cluster{Name: v1beta1.ClusterLocal, Labels: map[string]string{}}
		r.byName[local.Name] = local
		r.ordered = append([]Cluster{local}, r.ordered...)
	}
	return r
}
