package cueeval

import (
	"encoding/json"
	"fmt"
)

// Evaluator runs one CUE operation. Both implementations (Local in this
// process, sandbox.Pool in child processes) give the same answers for the
// same request; only the pool bounds time and memory.
//
// The error is an *Error when the source or its input is at fault, a
// *BudgetError when the evaluation hit a limit, or another error when the
// evaluator itself failed. Status, Bools and Values report the errors of
// their parts in the response instead, as each part stands on its own.
type Evaluator interface {
	Evaluate(req *Request) (*Response, error)
}

// Kinds of source. A template gets `context` declared and is validated
// before any input is filled in; a status part gets `context` and
// `parameter` declared and is not.
const (
	KindComponent = "ComponentDefinition"
	KindTrait     = "TraitDefinition"
	KindPolicy    = "PolicyDefinition"
)

// Parts of a definition: its template, or one of its status fields. Each
// is compiled and cached on its own: KubeVela evaluates them as separate
// CUE files, so two of them may declare the same field differently.
const (
	PartTemplate     = ""
	PartHealthPolicy = "status.healthPolicy"
	PartCustomStatus = "status.customStatus"
	PartDetails      = "status.details"
)

// Source is one piece of CUE a definition holds.
type Source struct {
	// Kind, Namespace and Name say whose it is, for the cache and for
	// messages; Part says which piece.
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Part      string `json:"part,omitempty"`
	// Version changes whenever Text may have (UID, resourceVersion and a
	// hash of Text): a cached compilation of another version is replaced.
	// Empty compiles Text on every use.
	Version string `json:"version,omitempty"`
	Text    string `json:"text"`
	// Omitted says Text was left out: the evaluator compiled this version
	// before (a template may well be empty).
	Omitted bool `json:"omitted,omitempty"`
}

// key is the cache slot of a source.
func (s Source) key() string {
	return s.Kind + "/" + s.Namespace + "/" + s.Name + "/" + s.Part
}

// Describe names the source as a user reads it:
// `ComponentDefinition "web" in namespace "team-a"`.
func (s Source) Describe() string {
	d := fmt.Sprintf("%s %q", s.Kind, s.Name)
	if s.Namespace != "" {
		d += fmt.Sprintf(" in namespace %q", s.Namespace)
	}
	if s.Part != "" {
		d += " (" + s.Part + ")"
	}
	return d
}

// Request is one operation; exactly one of its operation fields is set.
type Request struct {
	// Tenant is the namespace of the Application the evaluation is for,
	// when there is one: a definition that busts the budget there is not
	// evaluated there again for a while, whatever the input. It is not
	// sent to the evaluator.
	Tenant string `json:"-"`
	// Render evaluates a template with its parameter and context.
	Render *TemplateInput `json:"render,omitempty"`
	// Inspect reads a template's parameter with defaults and the workload
	// it renders, without exporting its objects.
	Inspect *TemplateInput `json:"inspect,omitempty"`
	// Status evaluates a definition's status parts.
	Status *StatusInput `json:"status,omitempty"`
	// Check compiles a source alone.
	Check *Source `json:"check,omitempty"`
	// Bools evaluates expressions to booleans; Values to concrete JSON.
	Bools  *Expressions `json:"bools,omitempty"`
	Values *Expressions `json:"values,omitempty"`
	// Step evaluates a workflow step definition's template once.
	Step *StepInput `json:"step,omitempty"`
}

// Describe names what the request evaluates, for messages.
func (r *Request) Describe() string {
	switch {
	case r.Render != nil:
		return r.Render.Source.Describe()
	case r.Inspect != nil:
		return r.Inspect.Source.Describe()
	case r.Check != nil:
		return r.Check.Source().Describe()
	case r.Status != nil:
		for _, s := range r.Status.parts() {
			return s.Source().Describe()
		}
	case r.Bools != nil:
		return r.Bools.What
	case r.Values != nil:
		return r.Values.What
	case r.Step != nil:
		return r.Step.Source.Describe()
	}
	return "a CUE evaluation"
}

// Source returns s itself, so that a *Source and a Source read alike.
func (s *Source) Source() Source { return *s }

// Sources are the cached sources of the request (those with a Version),
// to be read or changed in place: an evaluator that compiled one before
// needs only its Key and Version, not its Text.
func (r *Request) Sources() []*Source {
	var out []*Source
	add := func(s *Source) {
		if s != nil && s.Version != "" {
			out = append(out, s)
		}
	}
	switch {
	case r.Render != nil:
		add(&r.Render.Source)
	case r.Inspect != nil:
		add(&r.Inspect.Source)
	case r.Step != nil:
		add(&r.Step.Source)
	case r.Status != nil:
		for _, s := range r.Status.parts() {
			add(s)
		}
	}
	return out
}

// Key is the cache slot of the source: the same Key with another Version
// replaces what was compiled.
func (s Source) Key() string { return s.key() }

// TemplateInput is a definition template with the data it is filled with.
type TemplateInput struct {
	Source Source `json:"source"`
	// Context and Params are JSON: `context` and `parameter`.
	Context json.RawMessage `json:"context"`
	Params  json.RawMessage `json:"params"`
	// Actions are the results of the provider actions (vela/helm's
	// #Render) the template asked for in an earlier evaluation.
	Actions []ActionResult `json:"actions,omitempty"`
}

// StatusInput is a definition's status parts (nil when absent) with the
// context (live objects included) and parameter they read.
type StatusInput struct {
	HealthPolicy *Source         `json:"healthPolicy,omitempty"`
	CustomStatus *Source         `json:"customStatus,omitempty"`
	Details      *Source         `json:"details,omitempty"`
	Context      json.RawMessage `json:"context"`
	Params       json.RawMessage `json:"params"`
}

func (in *StatusInput) parts() []*Source {
	var out []*Source
	for _, s := range []*Source{in.HealthPolicy, in.CustomStatus, in.Details} {
		if s != nil {
			out = append(out, s)
		}
	}
	return out
}

// Expressions are CUE expressions evaluated in a scope: the fields of
// Scope, a JSON object, are what they may refer to.
type Expressions struct {
	Exprs []string        `json:"exprs"`
	Scope json.RawMessage `json:"scope"`
	// What names them for messages ("workflow step conditions").
	What string `json:"what,omitempty"`
}

// Response is the answer to one Request; the field of its operation is set.
type Response struct {
	Render     *Rendered     `json:"render,omitempty"`
	Inspection *Inspection   `json:"inspection,omitempty"`
	Status     *StatusResult `json:"status,omitempty"`
	Results    []ExprResult  `json:"results,omitempty"`
	Step       *StepRound    `json:"step,omitempty"`
	Cache      []CacheLookup `json:"cache,omitempty"`
	Err        *Error        `json:"err,omitempty"`
	Budget     *BudgetError  `json:"budget,omitempty"`
	// NeedSource says a source came without its Text and is not compiled
	// here (any more): send the request again, with the texts.
	NeedSource bool `json:"needSource,omitempty"`
}

// CacheLookup says whether a source of kind Kind was found compiled.
type CacheLookup struct {
	Kind string `json:"kind"`
	Hit  bool   `json:"hit"`
}

// Rendered is what a template evaluated to: its `output` (nil when it
// has none or it is empty), `outputs` in template order, `patch` and
// `patchOutputs`.
type Rendered struct {
	Output       json.RawMessage `json:"output,omitempty"`
	Outputs      []NamedObject   `json:"outputs,omitempty"`
	Patch        *Patch          `json:"patch,omitempty"`
	PatchOutputs []NamedPatch    `json:"patchOutputs,omitempty"`
	// Actions, when set, are the provider actions the template asks for
	// before it can render (nothing else is set): carry them out and
	// evaluate again with their results in TemplateInput.Actions.
	Actions []Action `json:"actions,omitempty"`
	// Charts are the Helm charts the template rendered.
	Charts []ChartInfo `json:"charts,omitempty"`
}

// Bytes is the size of what a template rendered, as JSON: its objects
// and its patches (which can make objects larger), for the render limits.
func (r *Rendered) Bytes() int {
	n := len(r.Output)
	for _, o := range r.Outputs {
		n += len(o.Object)
	}
	n += r.Patch.bytes()
	for _, p := range r.PatchOutputs {
		n += p.Patch.bytes()
	}
	return n
}

// NamedObject is one entry of `outputs`.
type NamedObject struct {
	Name   string          `json:"name"`
	Object json.RawMessage `json:"object"`
}

// NamedPatch is one entry of `patchOutputs`.
type NamedPatch struct {
	Name  string `json:"name"`
	Patch *Patch `json:"patch"`
}

// Inspection is what a template says about one use of it.
type Inspection struct {
	// Params are the properties completed with the template's defaults;
	// nil when the parameter is not concrete.
	Params json.RawMessage `json:"params,omitempty"`
	// Workload describes the rendered workload (`Deployment "web"`), empty
	// when the template renders none.
	Workload string `json:"workload,omitempty"`
}

// StatusResult is what a definition's status parts say. Each part's error
// is the message of why it could not be evaluated.
type StatusResult struct {
	Healthy    bool              `json:"healthy"`
	HealthErr  string            `json:"healthErr,omitempty"`
	Message    string            `json:"message,omitempty"`
	MessageErr string            `json:"messageErr,omitempty"`
	Details    map[string]string `json:"details,omitempty"`
	DetailsErr string            `json:"detailsErr,omitempty"`
}

// ExprResult is one expression's value, or why it has none.
type ExprResult struct {
	Bool  bool            `json:"bool,omitempty"`
	Value json.RawMessage `json:"value,omitempty"`
	Err   string          `json:"err,omitempty"`
}
