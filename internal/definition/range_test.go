package definition_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/definition"
)

// With app.oam.dev/autoUpdate, a pinned version that has no revision of
// its own resolves to the newest revision in its range, as KubeVela
// resolves it ("use latest version in specified range").
func TestNewestInRange_AutoUpdateTakesTheNewestRevisionInRange(t *testing.T) {
	rev := func(name string, typ v1beta1.DefinitionType) v1beta1.DefinitionRevision {
		return v1beta1.DefinitionRevision{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1beta1.DefinitionRevisionSpec{DefinitionType: typ}}
	}
	comp := v1beta1.DefinitionTypeComponent
	revs := []v1beta1.DefinitionRevision{
		rev("webservice-v1", comp), // numbered: revision 1
		rev("webservice-v1.2.0", comp),
		rev("webservice-v1.2.10", comp),
		rev("webservice-v1.2.9", comp),
		rev("webservice-v1.20.0", comp),
		rev("webservice-v1.3.0-rc.1", comp),
		rev("webservice-v2.0.0", comp),
		rev("webservice-v2.1.0", v1beta1.DefinitionTypeTrait), // another kind's
		rev("webservice-v3.x", comp),                          // no semantic version
	}
	for _, tc := range []struct{ typ, want string }{
		{"webservice@v1.2", "webservice-v1.2.10"},
		{"webservice@v1.2.0", "webservice-v1.2.0"},    // it exists: taken as named
		{"webservice@v1", "webservice-v1"},            // a revision of that name wins, as in KubeVela
		{"webservice@v1.3", "webservice-v1.3.0-rc.1"}, // a pre-release is in range
		{"webservice@v2", "webservice-v2.0.0"},        // the trait's revision is not a component's
		{"webservice@v1.4", ""},
		{"webservice@v3", ""},
		{"webservice@v9", ""},
	} {
		name, revName, _ := definition.Pin(tc.typ)
		got := definition.NewestInRange(revs, comp, name, revName)
		gotName := ""
		if got != nil {
			gotName = got.Name
		}
		if gotName != tc.want {
			t.Errorf("%s resolves to %q, want %q", tc.typ, gotName, tc.want)
		}
	}
}
