package tracker

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/steward-oam/steward/api/v1beta1"
)

// maxNameLength is the longest object name Kubernetes accepts for a
// cluster-scoped custom resource (a DNS subdomain).
const maxNameLength = 253

// Kind says which tracker of an Application is meant.
type Kind struct {
	Type v1beta1.ResourceTrackerType
	// Version is the application generation of a versioned tracker.
	Version int64
	// PublishVersion names a versioned tracker by the Application's
	// app.oam.dev/publishVersion instead of its generation.
	PublishVersion string
	// Revision is the ApplicationRevision a versioned tracker records
	// (app.oam.dev/appRevision): a tracker Record creates carries the
	// label from its first write. It is not part of the tracker's name.
	Revision string
}

// Root is the tracker of resources whose lifetime is the Application's.
func Root() Kind { return Kind{Type: v1beta1.ResourceTrackerTypeRoot} }

// Versioned is the tracker of one application generation.
func Versioned(generation int64) Kind {
	return Kind{Type: v1beta1.ResourceTrackerTypeVersioned, Version: generation}
}

// Published is the versioned tracker of an app.oam.dev/publishVersion.
func Published(version string) Kind {
	return Kind{Type: v1beta1.ResourceTrackerTypeVersioned, PublishVersion: version}
}

// VersionOf returns the versioned tracker kind of an Application: by
// publishVersion when set, else by generation.
func VersionOf(app *v1beta1.Application) Kind {
	if pv := app.Annotations[v1beta1.AnnotationPublishVersion]; pv != "" {
		return Published(pv)
	}
	return Versioned(app.Generation)
}

// ComponentRevision is the tracker of component revisions.
func ComponentRevision() Kind { return Kind{Type: v1beta1.ResourceTrackerTypeComponentRevision} }

func (k Kind) suffix() string {
	switch k.Type {
	case v1beta1.ResourceTrackerTypeVersioned:
		if k.PublishVersion != "" {
			return "pv-" + safeLabel(k.PublishVersion)
		}
		return "v" + strconv.FormatInt(k.Version, 10)
	case v1beta1.ResourceTrackerTypeComponentRevision:
		return "comprev"
	default:
		return "root"
	}
}

// Name returns the tracker name for an Application's name and namespace:
// "<app>.<namespace>.<suffix>". Namespaces and suffixes never contain dots,
// so reading the name from the right recovers the pair: two different pairs
// never share a name (joining with hyphens would: app "a-b" in "c" and app
// "a" in "b-c"). Names over the length limit keep a readable prefix and a
// hash of the full pair.
func Name(appName, appNamespace string, k Kind) string {
	suffix := "." + appNamespace + "." + k.suffix()
	name := appName + suffix
	if len(name) <= maxNameLength {
		return name
	}
	sum := sha256.Sum256([]byte(appNamespace + "/" + appName))
	hash := hex.EncodeToString(sum[:])[:16]
	keep := maxNameLength - len(suffix) - len(hash) - 1
	return strings.TrimRight(appName[:keep], ".-") + "-" + hash + suffix
}

// Labels are the labels every tracker of an Application carries; they are
// how trackers are listed and mapped back to their Application.
func Labels(appName, appNamespace string, k Kind) map[string]string {
	return map[string]string{
		v1beta1.LabelAppName:      appName,
		v1beta1.LabelAppNamespace: appNamespace,
		v1beta1.LabelTrackerType:  string(k.Type),
	}
}

// safeLabel turns a free-form version into a DNS label part. When it had
// to change anything, a hash of the original keeps different versions
// apart ("V1" and "v1").
func safeLabel(v string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(v) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteRune('-')
		}
	}
	out := strings.Trim(b.String(), "-")
	if out == v && len(out) <= 40 {
		return out
	}
	sum := sha256.Sum256([]byte(v))
	if len(out) > 40 {
		out = out[:40]
	}
	return strings.Trim(out, "-") + "-" + hex.EncodeToString(sum[:])[:8]
}

// KubeVelas reports whether KubeVela, not Steward, wrote a tracker: every
// tracker Steward writes carries the tracker type label
// (v1beta1.LabelTrackerType); KubeVela's (named "<app>-<namespace>",
// "<app>-v<generation>-<namespace>", "<app>-<publishVersion>-<namespace>"
// and "<app>-comp-rev-<namespace>") never do, though they carry the same
// app labels and the Application's UID.
func KubeVelas(rt *v1beta1.ResourceTracker) bool {
	return rt.Labels[v1beta1.LabelTrackerType] == ""
}

// Current returns the index in trackers of the versioned tracker the
// controller keeps for app: among the versioned trackers of app's UID, the
// one named for the version app asks for, else the last one listed; -1
// when there is none.
func Current(trackers []v1beta1.ResourceTracker, app *v1beta1.Application) int {
	want := Name(app.Name, app.Namespace, VersionOf(app))
	current := -1
	for i := range trackers {
		rt := &trackers[i]
		if rt.Spec.Type != v1beta1.ResourceTrackerTypeVersioned || rt.Labels[v1beta1.LabelAppUID] != string(app.UID) {
			continue
		}
		if rt.Name == want || current < 0 || trackers[current].Name != want {
			current = i
		}
	}
	return current
}
