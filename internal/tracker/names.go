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
}

// Root is the tracker of resources whose lifetime is the Application's.
func Root() Kind { return Kind{Type: v1beta1.ResourceTrackerTypeRoot} }

// Versioned is the tracker of one application generation.
func Versioned(generation int64) Kind {
	return Kind{Type: v1beta1.ResourceTrackerTypeVersioned, Version: generation}
}

// ComponentRevision is the tracker of component revisions.
func ComponentRevision() Kind { return Kind{Type: v1beta1.ResourceTrackerTypeComponentRevision} }

func (k Kind) suffix() string {
	switch k.Type {
	case v1beta1.ResourceTrackerTypeVersioned:
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
