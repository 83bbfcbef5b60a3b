package chaos

import (
	"fmt"
	"maps"
	"slices"
	"sort"
)

// The namespace of every Application and object the suite creates.
const chaosNS = "chaos"

// appNames are the Applications the suite plays with.
var appNames = []string{"alpha", "beta", "gamma"}

// component is one component of a spec: a k8s-objects ConfigMap named
// after the component with data.v = value, or a webservice Deployment
// named after the component with image = value.
type component struct {
	Name  string
	Web   bool
	Value string
}

func (c component) kind() string {
	if c.Web {
		return "Deployment"
	}
	return "ConfigMap"
}

// spec is the part of an Application the suite changes.
type spec struct {
	Components map[string]component
	// GC is the garbage-collect strategy per component name (never or
	// onAppDelete); components without an entry use the default.
	GC map[string]string
	// ReadOnly, ApplyOnce and TakeOver select component names.
	ReadOnly  map[string]bool
	ApplyOnce map[string]bool
	TakeOver  map[string]bool
}

func newSpec() spec {
	return spec{Components: map[string]component{}, GC: map[string]string{},
		ReadOnly: map[string]bool{}, ApplyOnce: map[string]bool{}, TakeOver: map[string]bool{}}
}

func (s spec) clone() spec {
	return spec{Components: maps.Clone(s.Components), GC: maps.Clone(s.GC),
		ReadOnly: maps.Clone(s.ReadOnly), ApplyOnce: maps.Clone(s.ApplyOnce), TakeOver: maps.Clone(s.TakeOver)}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := slices.Collect(maps.Keys(m))
	sort.Strings(keys)
	return keys
}

// appModel is what the suite knows about one Application.
type appModel struct {
	Name   string
	Exists bool
	Spec   spec
	// PV is the app.oam.dev/publishVersion annotation, "" when unset.
	PV string
	// PVSpec is the spec each publishVersion rendered, for rollbacks.
	PVSpec map[string]spec
	// Incarnation counts creations, for messages.
	Incarnation int
}

// effective is the spec whose objects the live version delivers: the
// snapshot of the publishVersion when one is set, else the current spec.
func (a *appModel) effective() spec {
	if a.PV != "" {
		if s, ok := a.PVSpec[a.PV]; ok {
			return s
		}
	}
	return a.Spec
}

// objState is what the model expects of one object.
type objState int

const (
	// absent: the object must not exist.
	absent objState = iota
	// present: the object must exist; with content when checkContent.
	present
	// undetermined: the documentation does not say; not checked.
	undetermined
)

func (s objState) String() string {
	return [...]string{"absent", "present", "undetermined"}[s]
}

// object is one object some version of an Application rendered.
type object struct {
	App  string
	Comp string
	Kind string
	Name string

	State objState
	// Value is the wanted data.v or image; checked when CheckContent.
	Value        string
	CheckContent bool
	// Kept: not rendered by the live version, kept by a policy.
	Kept bool
	// Untracked: kept after its Application was deleted (gc never or
	// read-only); no tracker lists it any more.
	Untracked bool
	// RecordedSkip: the last version that rendered it recorded it skipGC
	// (gc never or read-only). The record stays when the component
	// leaves the spec, and the newest record decides on deletion
	// (docs/concepts.md), whatever the rule says later.
	RecordedSkip bool
}

func (o *object) String() string {
	return fmt.Sprintf("%s %s/%s (app %s, component %s)", o.Kind, chaosNS, o.Name, o.App, o.Comp)
}

// world is the model of everything the suite created.
type world struct {
	Apps map[string]*appModel
	// Budget is the tenant's Application (budget_test.go).
	Budget *budgetModel
	// Flow is the workflow Application with a custom step
	// (customsteps_test.go).
	Flow    *flowModel
	Objects map[string]*object // by kind/name
	// counters give fresh names and values.
	next int
}

func newWorld() *world {
	w := &world{Apps: map[string]*appModel{}, Objects: map[string]*object{}, Budget: &budgetModel{}, Flow: &flowModel{}}
	for _, n := range appNames {
		w.Apps[n] = &appModel{Name: n, Spec: newSpec(), PVSpec: map[string]spec{}}
	}
	return w
}

func objKey(kind, name string) string { return kind + "/" + name }

func (w *world) fresh() int {
	w.next++
	return w.next
}

// settle recomputes the expected state of every object of app after a
// step, from the documented semantics:
//   - an object the live version renders is present with its content,
//     unless a read-only or apply-once rule lets the live content differ;
//   - an object no longer rendered is kept while a current garbage-collect
//     never/onAppDelete or read-only rule selects its component, and is
//     deleted otherwise ("deletion follows the newest policy"), also one
//     that was kept and whose rule was then removed ("the object goes as
//     soon as no live version renders it", docs/concepts.md);
//   - when the Application is deleted, gc never and read-only objects stay
//     (untracked), everything else goes.
func (w *world) settle(app *appModel, deleted bool) {
	eff := app.effective()
	for _, o := range w.Objects {
		if o.App != app.Name {
			continue
		}
		c, rendered := eff.Components[o.Comp]
		rendered = rendered && c.kind() == o.Kind // by the live version
		wanted := rendered && app.Exists && !deleted
		if o.Untracked && !wanted {
			// Left behind by an earlier incarnation: only a component of
			// the same name brings it back under management.
			continue
		}
		if wanted {
			o.State = present
			o.Value = c.Value
			// Under apply-once (data.v, onStateKeep) the live value wins
			// on re-syncs: it is whatever the last new version, a hand
			// edit, or an earlier read-only rule left.
			o.CheckContent = !app.Spec.ReadOnly[o.Comp] && !app.Spec.ApplyOnce[o.Comp]
			o.Kept, o.Untracked = false, false
			o.RecordedSkip = eff.GC[o.Comp] == "never" || eff.ReadOnly[o.Comp]
			continue
		}
		if o.State == absent {
			continue
		}
		rule := app.Spec.GC[o.Comp]
		readOnly := app.Spec.ReadOnly[o.Comp]
		o.CheckContent = false
		// The live version's own record counts too: a version pinned by
		// publishVersion recorded its rules, and a rule removed since
		// was not published ("an object is left when that record is
		// marked skipGC, or when the policies as they are now say so").
		// It records them only in the entries of what it renders: a
		// rule of its spec for a component it does not render marks no
		// record (what an older version left is judged by its own
		// record and the policies as they are now).
		recordedKeep := rendered && (eff.GC[o.Comp] == "never" || eff.ReadOnly[o.Comp])
		switch {
		case deleted && (rule == "never" || readOnly || recordedKeep || o.RecordedSkip):
			o.Untracked = true
		case deleted:
			o.State = absent
		case rule == "never" || rule == "onAppDelete" || readOnly:
			o.Kept = true
		default:
			o.State, o.Kept = absent, false
		}
	}
	for name, c := range eff.Components {
		k := objKey(c.kind(), name)
		if _, ok := w.Objects[k]; !ok && app.Exists && !deleted {
			w.Objects[k] = &object{App: app.Name, Comp: name, Kind: c.kind(), Name: name,
				State: present, Value: c.Value, CheckContent: !app.Spec.ReadOnly[name] && !app.Spec.ApplyOnce[name],
				RecordedSkip: eff.GC[name] == "never" || eff.ReadOnly[name]}
		}
	}
}
