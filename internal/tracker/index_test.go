package tracker

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
)

// A tracker is indexed under the Application its labels name, a rescue
// copy under the one it was taken for (one index, so that one lookup finds
// both), and a list selects through the
// index only when it reads the indexed cache.
func TestIndex_TrackersOfOneApplication(t *testing.T) {
	rt := &v1beta1.ResourceTracker{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{
		v1beta1.LabelAppName: "web", v1beta1.LabelAppNamespace: "team",
	}}}
	rescue := &v1beta1.ResourceTracker{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{
		v1beta1.LabelRescueOfApp: "web", v1beta1.LabelRescueOfNamespace: "team",
	}}}
	both := &v1beta1.ResourceTracker{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{
		v1beta1.LabelAppName: "web", v1beta1.LabelAppNamespace: "team", v1beta1.LabelRescueOfApp: "web", v1beta1.LabelRescueOfNamespace: "team",
	}}}
	two := &v1beta1.ResourceTracker{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{
		v1beta1.LabelAppName: "web", v1beta1.LabelAppNamespace: "team", v1beta1.LabelRescueOfApp: "api", v1beta1.LabelRescueOfNamespace: "team",
	}}}
	half := &v1beta1.ResourceTracker{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{v1beta1.LabelAppName: "web"}}}
	for _, c := range []struct {
		name string
		got  []string
		want []string
	}{
		{"tracker", AppIndex(rt), []string{"team/web"}},
		{"rescue copy", AppIndex(rescue), []string{"team/web"}},
		{"both, one app", AppIndex(both), []string{"team/web"}},
		{"both, two apps", AppIndex(two), []string{"team/web", "team/api"}},
		{"one label", AppIndex(half), nil},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s: index %v, want %v", c.name, c.got, c.want)
		}
	}

	app := AppRef{Name: "web", Namespace: "team"}
	fields := func(s *Store, cached bool) string {
		o := &client.ListOptions{}
		o.ApplyOptions(s.selectApp(cached, v1beta1.LabelAppNamespace, v1beta1.LabelAppName, app))
		if o.LabelSelector == nil || o.LabelSelector.String() != "app.oam.dev/name=web,app.oam.dev/namespace=team" {
			t.Fatalf("labels %v", o.LabelSelector)
		}
		if o.FieldSelector == nil {
			return ""
		}
		return o.FieldSelector.String()
	}
	if got := fields(&Store{Indexed: true}, true); got != IndexApp+"=team/web" {
		t.Errorf("indexed cache: fields %q", got)
	}
	if got := fields(&Store{Indexed: true}, false); got != "" {
		t.Errorf("API server read: fields %q, which it would refuse", got)
	}
	if got := fields(&Store{}, true); got != "" {
		t.Errorf("unindexed client: fields %q", got)
	}
}
