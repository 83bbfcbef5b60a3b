package v1beta1

// ClusterLocal is the hub cluster's name as users write it: in topology
// policies, workflow steps, placements and the CLI (KubeVela's "local").
const ClusterLocal = "local"

// IsLocalCluster reports whether a cluster name means the hub: "local",
// or "" as a ResourceTracker entry records it.
func IsLocalCluster(name string) bool { return name == "" || name == ClusterLocal }

// ClusterKey is the one form Steward keys objects by cluster in, as
// ResourceTracker entries record it: "" for the hub however it is
// spelled, else the cluster's name.
func ClusterKey(name string) string {
	if IsLocalCluster(name) {
		return ""
	}
	return name
}

// ClusterDisplay is how a cluster is named to users, in messages and
// output: "local" for the hub, else the cluster's name.
func ClusterDisplay(name string) string {
	if IsLocalCluster(name) {
		return ClusterLocal
	}
	return name
}
