package tracker

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
)

// The cache index on trackers. A cached List by label selector looks at
// every tracker in the cache, so one Application's pass would cost time in
// proportion to the whole fleet; through the index it costs its own
// trackers only. Register it on the manager's cache (IndexField) and set
// Store.Indexed.
const (
	// IndexApp keys a tracker by the Application its labels name, and a
	// rescue copy by the Application it was taken for, both as
	// "namespace/name": one lookup finds an Application's trackers and its
	// rescue copies together (ListRestoring), and the labels tell them
	// apart.
	IndexApp = "steward.oam.dev/app"
)

// AppIndex returns a tracker's or a rescue copy's IndexApp keys: none
// without both labels of either pair.
func AppIndex(obj client.Object) []string {
	keys := indexOf(obj, v1beta1.LabelAppNamespace, v1beta1.LabelAppName)
	for _, k := range indexOf(obj, v1beta1.LabelRescueOfNamespace, v1beta1.LabelRescueOfApp) {
		if len(keys) == 0 || keys[0] != k {
			keys = append(keys, k)
		}
	}
	return keys
}

func indexOf(obj client.Object, namespaceLabel, nameLabel string) []string {
	l := obj.GetLabels()
	ns, name := l[namespaceLabel], l[nameLabel]
	if ns == "" || name == "" {
		return nil
	}
	return []string{ns + "/" + name}
}

// labelled reports whether rt's pair of labels names app.
func labelled(rt *v1beta1.ResourceTracker, namespaceLabel, nameLabel string, app AppRef) bool {
	return rt.Labels[namespaceLabel] == app.Namespace && rt.Labels[nameLabel] == app.Name
}

// selectApp returns the list options selecting the trackers of app by
// labels, and through IndexApp when cached says the list reads
// Store's indexed cache (the API server knows no such field). The labels
// stay in either case: the index only narrows the search.
func (s *Store) selectApp(cached bool, nsLabel, nameLabel string, app AppRef) []client.ListOption {
	opts := []client.ListOption{client.MatchingLabels{nsLabel: app.Namespace, nameLabel: app.Name}}
	if s.Indexed && cached {
		opts = append(opts, client.MatchingFields{IndexApp: app.Namespace + "/" + app.Name})
	}
	return opts
}
