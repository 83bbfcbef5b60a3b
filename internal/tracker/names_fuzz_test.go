package tracker

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// FuzzName_PublishVersion names the versioned trackers of two arbitrary
// app.oam.dev/publishVersion values, which any Application author sets
// freely. Each name is a valid object name whose labels are valid label
// values, and two different versions of one Application never share a
// tracker: a shared tracker would make a new version look recorded
// already, so it would never be rendered.
func FuzzName_PublishVersion(f *testing.F) {
	f.Fuzz(func(t *testing.T, appName, namespace, v1, v2 string) {
		// The Application's own name and namespace are valid: the API
		// server and the controller's name check make sure of that.
		if len(validation.IsDNS1123Subdomain(appName)) > 0 || len(validation.IsValidLabelValue(appName)) > 0 {
			appName = "shop"
		}
		if len(validation.IsDNS1123Label(namespace)) > 0 {
			namespace = "prod"
		}
		names := map[string]string{
			Name(appName, namespace, Root()):              "root",
			Name(appName, namespace, ComponentRevision()): "component revisions",
			Name(appName, namespace, Versioned(1)):        "generation 1",
		}
		// Known and left alone: a version spelled exactly as the name part
		// of a version that was changed to fit ("v1-dae96fc0", the form of
		// "V1") shares that version's tracker. Telling them apart would
		// rename the trackers of every existing version that ends in a
		// hyphen and eight hex digits (build-deadbeef), so upgrading would
		// lose their rollback history. The fuzz skips such pairs.
		if looksHashed(v1, v2) || looksHashed(v2, v1) {
			return
		}
		for _, v := range []string{v1, v2} {
			if v == "" {
				continue
			}
			k := Published(v)
			n := Name(appName, namespace, k)
			if errs := validation.IsDNS1123Subdomain(n); len(errs) > 0 {
				t.Fatalf("publishVersion %q: tracker name %q: %v", v, n, errs)
			}
			for key, value := range Labels(appName, namespace, k) {
				if errs := validation.IsValidLabelValue(value); len(errs) > 0 {
					t.Fatalf("publishVersion %q: label %s=%q: %v", v, key, value, errs)
				}
			}
			if other, ok := names[n]; ok && other != "publishVersion "+v {
				t.Fatalf("publishVersion %q and %s share the tracker name %q", v, other, n)
			}
			names[n] = "publishVersion " + v
		}
	})
}

// looksHashed reports whether v is the name part safeLabel makes of
// another version.
func looksHashed(v, other string) bool {
	return other != v && strings.TrimPrefix(Published(other).suffix(), "pv-") == v
}
