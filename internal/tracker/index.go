package tracker

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
)

// Cache indexes on trackers. A cached List by label selector looks at
// every tracker in the cache, so one Application's pass would cost time in
// proportion to the whole fleet; through an index it costs its own
// trackers only. Register both on the manager's cache (IndexField) and set
// Store.Indexed.
const (
	// IndexApp keys a tracker by the Application its labels name, as
	// "namespace/name".
	IndexApp = "steward.oam.dev/app"
	// IndexRescueOf keys a rescue copy by the Application it was taken
	// for, as "namespace/name".
	IndexRescueOf = "steward.oam.dev/rescue-of"
)

// AppIndex returns a tracker's IndexApp key, none without both labels.
func AppIndex(obj client.Object) []string {
	return indexOf(obj, v1beta1.LabelAppNamespace, v1beta1.LabelAppName)
}

// RescueOfIndex returns a rescue copy's IndexRescueOf key, none for any
// other tracker.
func RescueOfIndex(obj client.Object) []string {
	return indexOf(obj, v1beta1.LabelRescueOfNamespace, v1beta1.LabelRescueOfApp)
}

func indexOf(obj client.Object, namespaceLabel, nameLabel string) []string {
	l := obj.GetLabels()
	ns, name := l[namespaceLabel], l[nameLabel]
	if ns == "" || name == "" {
		return nil
	}
	return []string{ns + "/" + name}
}

// selectApp returns the list options selecting the trackers of app by
// labels, and through the index of key when cached says the list reads
// Store's indexed cache (the API server knows no such field). The labels
// stay in either case: the index only narrows the search.
func (s *Store) selectApp(cached bool, key string, nsLabel, nameLabel string, app AppRef) []client.ListOption {
	opts := []client.ListOption{client.MatchingLabels{nsLabel: app.Namespace, nameLabel: app.Name}}
	if s.Indexed && cached {
		opts = append(opts, client.MatchingFields{key: app.Namespace + "/" + app.Name})
	}
	return opts
}
