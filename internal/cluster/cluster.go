package cluster

import (
	"errors"
	"strings"

	"github.com/steward-oam/steward/api/v1beta1"
)

// The names below are KubeVela's, so that clusters joined with `vela cluster
// join` are served by Steward and the other way round.
const (
	// DefaultNamespace holds the cluster Secrets unless told otherwise.
	DefaultNamespace = "vela-system"

	// LabelCredentialType marks a Secret as a cluster Secret and says how
	// its credentials authenticate.
	LabelCredentialType = "cluster.core.oam.dev/cluster-credential-type"
	// LabelEndpointType says how the cluster is reached. Steward only
	// supports the default, a constant endpoint in the Secret.
	LabelEndpointType = "cluster.core.oam.dev/cluster-endpoint-type"
	// AnnotationAlias is a display name for the cluster.
	AnnotationAlias = "cluster.core.oam.dev/cluster-alias"

	// reservedPrefix starts the label keys that are bookkeeping rather than
	// user labels; they are not shown nor matched by cluster selectors.
	reservedPrefix = "cluster.core.oam.dev"

	// Secret data keys.
	keyEndpoint = "endpoint"
	keyCA       = "ca.crt"
	keyCALegacy = "ca"
	keyToken    = "token"
	keyCert     = "tls.crt"
	keyKey      = "tls.key"
	keyProxyURL = "proxy-url"
)

// CredentialType is how Steward authenticates to a cluster.
type CredentialType string

// Credential types. The local cluster is reached with the controller's own
// credentials, shown as Internal.
const (
	CredentialServiceAccountToken CredentialType = "ServiceAccountToken"
	CredentialX509Certificate     CredentialType = "X509Certificate"
	CredentialInternal            CredentialType = "Internal"
)

// ErrNotRegistered is wrapped by errors about a cluster that has no Secret,
// so callers can tell a detached cluster from an unreachable one.
var ErrNotRegistered = errors.New("cluster is not registered")

// Cluster is a registered target cluster as placement sees it: a name to
// place on and labels to select by. Credentials stay inside this package.
type Cluster struct {
	// Name is the Secret's name, or "local" for the hub.
	Name string
	// Alias is an optional display name.
	Alias string
	// Labels are the Secret's labels without Steward's bookkeeping ones;
	// topology policies select clusters by them.
	Labels map[string]string
	// Endpoint is the API server URL; empty for local.
	Endpoint string
	// CredentialType is how the cluster is reached.
	CredentialType CredentialType
}

// LocalCluster returns the hub as a Cluster: always registered, no labels.
func LocalCluster() Cluster {
	return Cluster{Name: v1beta1.ClusterLocal, Labels: map[string]string{}, CredentialType: CredentialInternal}
}

// IsReservedLabel reports whether a label key is bookkeeping of Steward
// and KubeVela (cluster.core.oam.dev/...) rather than a user label.
func IsReservedLabel(key string) bool { return strings.HasPrefix(key, reservedPrefix) }

// userLabels drops Steward's and KubeVela's bookkeeping labels.
func userLabels(labels map[string]string) map[string]string {
	out := make(map[string]string, len(labels))
	for k, v := range labels {
		if !IsReservedLabel(k) {
			out[k] = v
		}
	}
	return out
}
