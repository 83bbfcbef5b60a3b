package facts

import (
	"errors"
	"fmt"
	"strings"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cluster"
	"github.com/steward-oam/steward/internal/tracker"
)

// StepGroup is the entries of one cluster and one workflow step.
type StepGroup struct {
	Cluster, Step string
	Entries       []v1beta1.ManagedResource
}

// ClusterShare collects what one cluster's share of a phase did. The
// shares of different clusters run concurrently, each with its own, and
// are merged into the pass afterwards in cluster order.
type ClusterShare struct {
	Keep     KeepReport
	GC       GCReport
	Drop     map[tracker.Key]bool
	RetryErr error
}

func NewClusterShare() *ClusterShare { return &ClusterShare{Drop: map[tracker.Key]bool{}} }

func (p *ClusterShare) SetRetry(err error) {
	if p.RetryErr == nil {
		p.RetryErr = err
	}
}

// ClusterGroup is the entries of one cluster, in recorded order.
type ClusterGroup struct {
	Cluster string
	Entries []v1beta1.ManagedResource
}

// ByCluster groups entries by cluster, clusters in order of first
// appearance.
func ByCluster(entries []v1beta1.ManagedResource) []ClusterGroup {
	idx := map[string]int{}
	var out []ClusterGroup
	for _, e := range entries {
		name := v1beta1.ClusterKey(e.Cluster)
		i, ok := idx[name]
		if !ok {
			i = len(out)
			idx[name] = i
			out = append(out, ClusterGroup{Cluster: name})
		}
		out[i].Entries = append(out[i].Entries, e)
	}
	return out
}

// ClusterFailure records that a whole cluster could not be reached.
func ClusterFailure(name string, err error) Failure {
	if name == "" {
		name = v1beta1.ClusterLocal
	}
	if !strings.HasPrefix(err.Error(), fmt.Sprintf("cluster %q", name)) {
		err = fmt.Errorf("cluster %q: %w", name, err)
	}
	return Failure{Key: tracker.Key{Cluster: name}, Reason: v1beta1.ReasonClusterUnreachable, Err: err}
}

// IsUnreachable reports errors that mean a cluster cannot be reached or is
// no longer registered, as opposed to refusals a user must fix.
func IsUnreachable(err error) bool {
	return cluster.IsUnreachable(err) || errors.Is(err, cluster.ErrNotRegistered)
}

// Detached reports whether err says the cluster is no longer registered:
// its objects were left behind on purpose (steward cluster detach --force).
func Detached(err error) bool { return errors.Is(err, cluster.ErrNotRegistered) }

// EntryFailure is the failure of one entry's object; when its cluster
// cannot be reached at all it is the cluster's failure instead, reported
// once for all of the cluster's objects.
func EntryFailure(e v1beta1.ManagedResource, reason string, err error) Failure {
	if IsUnreachable(err) {
		return ClusterFailure(e.Cluster, err)
	}
	if e.Cluster != "" {
		err = fmt.Errorf("cluster %q: %w", e.Cluster, err)
	}
	return Failure{Key: tracker.KeyOf(e), Component: e.Component, Reason: reason, Err: err}
}
