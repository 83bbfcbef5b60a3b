package inventory

import (
	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/policy"
)

// Keeper says what an Application's resource policies, as they are now,
// keep of the objects its trackers list: the policies of the spec, not
// those of the version that recorded an entry, so a rule added later
// protects an object an earlier version created and a rule removed lets
// it go.
type Keeper struct {
	rules *policy.Rules
	// types are the component types of the spec, by component name.
	types map[string]string
	// guesses are the types tried for a component no longer in the spec:
	// "" (a type no rule names) and each type a rule selects by.
	guesses []string
}

// KeeperOf returns the Keeper of app's policies; nil rules (policies that
// do not parse) keep nothing, though the controller deletes nothing while
// they do not parse.
func KeeperOf(app *v1beta1.Application, rules *policy.Rules) Keeper {
	if rules == nil {
		rules = &policy.Rules{}
	}
	return Keeper{rules: rules, types: policy.ComponentTypes(app), guesses: append([]string{""}, rules.ComponentTypes()...)}
}

// OnUpdate says why the policies keep the object of e when no version of
// the Application renders it: a garbage-collect rule with strategy never
// or onAppDelete, or a read-only rule; "" when they let it go.
func (k Keeper) OnUpdate(e v1beta1.ManagedResource) Why {
	return k.decide(e, func(r policy.Resource) Why {
		if why := k.onDelete(r); why != "" {
			return why
		}
		if k.rules.GCStrategy(r) == policy.OnAppDelete {
			return WhyOnAppDelete
		}
		return ""
	})
}

// OnDelete says why the policies keep the object of e when the
// Application is deleted: garbage-collect never, or read-only; "" when
// it goes with the Application.
func (k Keeper) OnDelete(e v1beta1.ManagedResource) Why {
	return k.decide(e, k.onDelete)
}

// onDelete is OnDelete for a resource as selectors see it.
func (k Keeper) onDelete(r policy.Resource) Why {
	switch {
	case k.rules.GCStrategy(r) == policy.Never:
		return WhyNever
	case k.rules.ReadOnly(r):
		return WhyReadOnly
	}
	return ""
}

// decide asks keep about e. The type of a component the spec no longer
// has is not known (selectors match a component's type, which only the
// spec tells), so every type a rule could select it by is tried: the
// object is kept if one of them keeps it. A rule is never ignored for
// want of the type.
func (k Keeper) decide(e v1beta1.ManagedResource, keep func(policy.Resource) Why) Why {
	r := policy.Resource{Component: e.Component, Trait: e.Trait, Kind: e.Kind, Name: e.Name}
	if t, ok := k.types[e.Component]; ok || e.Component == "" {
		r.ComponentType = t
		return keep(r)
	}
	var first Why
	every := true
	for _, t := range k.guesses {
		r.ComponentType = t
		why := keep(r)
		every = every && why != ""
		if first == "" {
			first = why
		}
	}
	switch {
	case first == "":
		return ""
	case every:
		return first
	default:
		return WhyTypeUnknown
	}
}
