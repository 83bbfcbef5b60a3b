package record

import (
	"fmt"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/delivery"
	"github.com/steward-oam/steward/internal/policy"
	"github.com/steward-oam/steward/internal/tracker"
	"github.com/steward-oam/steward/internal/workflow"
)

// Entries turns the objects a version delivers into tracker entries,
// in delivery order. Objects a garbage-collect rule keeps for the
// Application's lifetime (onAppDelete, never) go to the root tracker;
// never and read-only objects are marked skipGC so that Steward never
// deletes them.
func Entries(app *v1beta1.Application, objs []delivery.Object, rules *policy.Rules) (versioned, root []v1beta1.ManagedResource, err error) {
	types := policy.ComponentTypes(app)
	gated := workflow.Gated(workflow.Of(app))
	for _, o := range objs {
		e, err := tracker.Entry(o.Cluster, o.Component, o.Trait, o.Object)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", o.Source(), err)
		}
		if gated {
			// Applied once the workflow reaches the step.
			e.Step = o.Step
		}
		res := ResourceOf(e, types)
		strategy := rules.GCStrategy(res)
		e.SkipGC = strategy == policy.Never || rules.ReadOnly(res)
		if strategy == policy.OnAppUpdate {
			versioned = append(versioned, e)
		} else {
			root = append(root, e)
		}
	}
	return versioned, root, nil
}

// ResourceOf describes an entry for policy selectors.
func ResourceOf(e v1beta1.ManagedResource, types map[string]string) policy.Resource {
	return policy.Resource{Component: e.Component, ComponentType: types[e.Component], Trait: e.Trait, Kind: e.Kind, Name: e.Name}
}
