package inventory

import "testing"

func TestKeeper(t *testing.T) {
	byType := func(strategy string, types ...string) string {
		list := `"` + types[0] + `"`
		for _, ty := range types[1:] {
			list += `, "` + ty + `"`
		}
		return `[{"name": "gc", "type": "garbage-collect", "properties": {"rules": [{"selector": {"componentTypes": [` + list + `]}, "strategy": "` + strategy + `"}]}}]`
	}
	for _, tc := range []struct {
		name               string
		components         []string
		policies           string
		component          string
		onUpdate, onDelete Why
	}{
		{name: "no policies", components: []string{"a"}, component: "a"},
		{name: "onAppDelete keeps on update only", components: []string{"a"}, policies: gc("a", "onAppDelete"), component: "a", onUpdate: WhyOnAppDelete},
		{name: "never keeps always", components: []string{"a"}, policies: gc("a", "never"), component: "a", onUpdate: WhyNever, onDelete: WhyNever},
		{name: "read-only keeps always", components: []string{"a"}, policies: readOnly("a"), component: "a", onUpdate: WhyReadOnly, onDelete: WhyReadOnly},
		{name: "a type rule for the component's type", components: []string{"webservice:a"}, policies: byType("never", "webservice"), component: "a", onUpdate: WhyNever, onDelete: WhyNever},
		{name: "a type rule for another type", components: []string{"a"}, policies: byType("never", "webservice"), component: "a"},
		{name: "component left the spec: a type rule may keep it", components: []string{"b"}, policies: byType("never", "webservice"), component: "a",
			onUpdate: WhyTypeUnknown, onDelete: WhyTypeUnknown},
		{name: "component left the spec: a rule keeps it whatever its type", components: []string{"b"}, policies: gc("a", "onAppDelete"), component: "a", onUpdate: WhyOnAppDelete},
		{name: "an object of no component (a workflow step's)", components: []string{"b"}, policies: byType("never", "webservice"), component: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := keeper(t, tc.components, tc.policies)
			e := cm(tc.component, "1")
			e.Name = "obj"
			if got := k.OnUpdate(e); got != tc.onUpdate {
				t.Errorf("OnUpdate = %q, want %q", got, tc.onUpdate)
			}
			if got := k.OnDelete(e); got != tc.onDelete {
				t.Errorf("OnDelete = %q, want %q", got, tc.onDelete)
			}
		})
	}
}
