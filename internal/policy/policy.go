package policy

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/steward-oam/steward/api/v1beta1"
)

// Policy types Steward implements natively.
const (
	TypeGarbageCollect = "garbage-collect"
	TypeApplyOnce      = "apply-once"
	TypeReadOnly       = "read-only"
	TypeTakeOver       = "take-over"
	TypeSharedResource = "shared-resource"
)

// GCStrategy says when a resource is garbage-collected.
type GCStrategy string

// Garbage-collection strategies.
const (
	// OnAppUpdate: deleted when a newer version no longer renders it (the default).
	OnAppUpdate GCStrategy = "onAppUpdate"
	// OnAppDelete: kept across versions, deleted with the Application.
	OnAppDelete GCStrategy = "onAppDelete"
	// Never: never deleted by Steward, not even with the Application.
	Never GCStrategy = "never"
)

// Apply-once affects.
const (
	AffectOnUpdate    = "onUpdate"
	AffectOnStateKeep = "onStateKeep"
)

// Resource is one rendered object, as selectors see it.
type Resource struct {
	Component     string
	ComponentType string
	// Trait is the trait type that rendered the object; empty for the
	// component's own objects.
	Trait string
	Kind  string
	Name  string
}

// ComponentTypes maps app's component names to their types: a
// Resource's ComponentType, for the selectors.
func ComponentTypes(app *v1beta1.Application) map[string]string {
	out := make(map[string]string, len(app.Spec.Components))
	for _, c := range app.Spec.Components {
		out[c.Name] = c.Type
	}
	return out
}

// Selector selects resources. Every field given must match; an empty
// selector selects everything.
type Selector struct {
	ComponentNames []string `json:"componentNames,omitempty"`
	ComponentTypes []string `json:"componentTypes,omitempty"`
	OAMTypes       []string `json:"oamTypes,omitempty"`
	TraitTypes     []string `json:"traitTypes,omitempty"`
	ResourceTypes  []string `json:"resourceTypes,omitempty"`
	ResourceNames  []string `json:"resourceNames,omitempty"`
}

// Matches reports whether the selector selects r.
func (s Selector) Matches(r Resource) bool {
	oamType := "COMPONENT"
	if r.Trait != "" {
		oamType = "TRAIT"
	}
	return in(s.ComponentNames, r.Component) && in(s.ComponentTypes, r.ComponentType) &&
		in(s.OAMTypes, oamType) && in(s.TraitTypes, r.Trait) &&
		in(s.ResourceTypes, r.Kind) && in(s.ResourceNames, r.Name)
}

func in(list []string, v string) bool { return len(list) == 0 || slices.Contains(list, v) }

// GCRule is one rule of a garbage-collect policy.
type GCRule struct {
	Selector Selector   `json:"selector"`
	Strategy GCStrategy `json:"strategy,omitempty"`
}

// GarbageCollect is the garbage-collect policy.
type GarbageCollect struct {
	ApplicationRevisionLimit *int     `json:"applicationRevisionLimit,omitempty"`
	KeepLegacyResource       bool     `json:"keepLegacyResource,omitempty"`
	ContinueOnFailure        bool     `json:"continueOnFailure,omitempty"`
	Rules                    []GCRule `json:"rules,omitempty"`
}

// ApplyOnceStrategy names the fields StateKeep leaves alone.
type ApplyOnceStrategy struct {
	Affect string   `json:"affect,omitempty"`
	Path   []string `json:"path"`
}

// ApplyOnceRule is one rule of an apply-once policy.
type ApplyOnceRule struct {
	Selector Selector          `json:"selector,omitempty"`
	Strategy ApplyOnceStrategy `json:"strategy"`
}

// ApplyOnce is the apply-once policy.
type ApplyOnce struct {
	Enable bool            `json:"enable,omitempty"`
	Rules  []ApplyOnceRule `json:"rules,omitempty"`
}

type selectorRules struct {
	Rules []struct {
		Selector Selector `json:"selector"`
	} `json:"rules,omitempty"`
}

// Rules are the resource policies of one Application.
type Rules struct {
	GC        GarbageCollect
	ApplyOnce ApplyOnce
	readOnly  []Selector
	takeOver  []Selector
	shared    []Selector
}

// Parse reads the resource policies of app. Policies of other types are
// ignored here. Properties that do not fit are an error naming the policy.
func Parse(app *v1beta1.Application) (*Rules, error) {
	r := &Rules{}
	for _, p := range app.Spec.Policies {
		var raw []byte
		if p.Properties != nil {
			raw = p.Properties.Raw
		}
		var err error
		switch p.Type {
		case TypeGarbageCollect:
			err = decode(raw, &r.GC)
			for i := range r.GC.Rules {
				switch r.GC.Rules[i].Strategy {
				case "":
					r.GC.Rules[i].Strategy = OnAppUpdate
				case OnAppUpdate, OnAppDelete, Never:
				default:
					err = fmt.Errorf("rules[%d].strategy %q: want onAppUpdate, onAppDelete or never", i, r.GC.Rules[i].Strategy)
				}
			}
		case TypeApplyOnce:
			err = decode(raw, &r.ApplyOnce)
		case TypeReadOnly:
			r.readOnly, err = selectors(raw)
		case TypeTakeOver:
			r.takeOver, err = selectors(raw)
		case TypeSharedResource:
			r.shared, err = selectors(raw)
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("policy %q (%s): %w", p.Name, p.Type, err)
		}
	}
	return r, nil
}

func decode(raw []byte, into any) error {
	if len(raw) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, into); err != nil {
		return fmt.Errorf("properties: %w", err)
	}
	return nil
}

func selectors(raw []byte) ([]Selector, error) {
	var sr selectorRules
	if err := decode(raw, &sr); err != nil {
		return nil, err
	}
	out := make([]Selector, 0, len(sr.Rules))
	for _, r := range sr.Rules {
		out = append(out, r.Selector)
	}
	return out, nil
}

func anyMatches(sels []Selector, r Resource) bool {
	for _, s := range sels {
		if s.Matches(r) {
			return true
		}
	}
	return false
}

// GCStrategy returns the strategy of the first garbage-collect rule that
// selects r, or OnAppUpdate.
func (p *Rules) GCStrategy(r Resource) GCStrategy {
	for _, rule := range p.GC.Rules {
		if rule.Selector.Matches(r) {
			return rule.Strategy
		}
	}
	return OnAppUpdate
}

// ComponentTypes returns the component types the garbage-collect and
// read-only rules select by, each once, in rule order. They are the types
// that could decide for an object whose component is no longer in the
// spec, and so has no known type: the delete decision
// (internal/inventory) tries each before it lets such an object go.
func (p *Rules) ComponentTypes() []string {
	var out []string
	add := func(s Selector) {
		for _, t := range s.ComponentTypes {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	for _, rule := range p.GC.Rules {
		add(rule.Selector)
	}
	for _, s := range p.readOnly {
		add(s)
	}
	return out
}

// ReadOnly reports whether r is read-only: never written, and an error
// when it does not exist.
func (p *Rules) ReadOnly(r Resource) bool { return anyMatches(p.readOnly, r) }

// TakeOver reports whether an existing r that no Application owns may be
// adopted.
func (p *Rules) TakeOver(r Resource) bool { return anyMatches(p.takeOver, r) }

// Shared reports whether r may be shared with other Applications.
func (p *Rules) Shared(r Resource) bool { return anyMatches(p.shared, r) }

// ApplyOncePaths returns the field paths of r that must not be reverted on
// a pass: "*" for the whole object. fresh is true when the pass dispatches
// a new version (affect onUpdate), false for StateKeep (onStateKeep); an
// empty affect applies to both.
func (p *Rules) ApplyOncePaths(r Resource, fresh bool) []string {
	if !p.ApplyOnce.Enable {
		return nil
	}
	if len(p.ApplyOnce.Rules) == 0 {
		if fresh {
			return nil
		}
		return []string{"*"}
	}
	want := AffectOnStateKeep
	if fresh {
		want = AffectOnUpdate
	}
	for _, rule := range p.ApplyOnce.Rules {
		if !rule.Selector.Matches(r) {
			continue
		}
		if rule.Strategy.Affect != "" && rule.Strategy.Affect != want {
			return nil
		}
		return rule.Strategy.Path
	}
	return nil
}

// nativeTypes are the policy types KubeVela's controller interprets
// itself rather than rendering their PolicyDefinition's template (its
// appfile parser's list): Steward's resource policies, placement
// (topology, override), replication, and the ones it accepts without
// acting on them (debug, resource-update, env-binding).
var nativeTypes = map[string]bool{
	TypeGarbageCollect: true, TypeApplyOnce: true, TypeReadOnly: true, TypeTakeOver: true, TypeSharedResource: true,
	v1beta1.PolicyTypeTopology: true, v1beta1.PolicyTypeOverride: true, TypeReplication: true,
	"debug": true, "resource-update": true, "env-binding": true,
}

// Native reports whether a policy type is interpreted by the controller:
// its PolicyDefinition's template, if any, is never rendered. Every other
// type renders its definition's template, whose output and outputs are
// delivered as the Application's objects (render.RenderPolicies).
func Native(typ string) bool { return nativeTypes[typ] }
