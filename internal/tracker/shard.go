package tracker

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
)

// stampShard writes the Store's shard label into labels, when sharding is
// on, and returns labels.
func (s *Store) stampShard(labels map[string]string) map[string]string {
	if s.Shard != "" {
		labels[v1beta1.LabelScheduledShardID] = s.Shard
	}
	return labels
}

// Adopt relabels the trackers of app (and the rescue copies of its
// trackers) that carry another shard's label, or none, with the Store's
// shard, so that this replica's cache sees them:
// an Application moved from another shard (or sharding just turned on)
// keeps its history. It reads from the API server, which the caller's
// cache cannot do for trackers outside its shard, and returns how many it
// relabelled. Every write carries the resourceVersion read.
func (s *Store) Adopt(ctx context.Context, app AppRef) (int, error) {
	if s.Shard == "" {
		return 0, nil
	}
	var list, rescues v1beta1.ResourceTrackerList
	if err := s.reader().List(ctx, &list, client.MatchingLabels{
		v1beta1.LabelAppName: app.Name, v1beta1.LabelAppNamespace: app.Namespace,
	}); err != nil {
		return 0, fmt.Errorf("listing resource trackers of %s/%s: %w", app.Namespace, app.Name, err)
	}
	// The rescue copies of a re-creation another shard left half done
	// move too, so that this shard finishes it.
	if err := s.reader().List(ctx, &rescues, client.MatchingLabels{
		v1beta1.LabelRescueOfApp: app.Name, v1beta1.LabelRescueOfNamespace: app.Namespace,
	}); err != nil {
		return 0, fmt.Errorf("listing rescued resource trackers of %s/%s: %w", app.Namespace, app.Name, err)
	}
	list.Items = append(list.Items, rescues.Items...)
	n := 0
	for i := range list.Items {
		rt := &list.Items[i]
		if rt.Labels[v1beta1.LabelScheduledShardID] == s.Shard {
			continue
		}
		patch := client.MergeFromWithOptions(rt.DeepCopy(), client.MergeFromWithOptimisticLock{})
		rt.Labels[v1beta1.LabelScheduledShardID] = s.Shard
		if err := s.Client.Patch(ctx, rt, patch); err != nil {
			return n, fmt.Errorf("moving resource tracker %s to shard %s: %w", rt.Name, s.Shard, err)
		}
		n++
	}
	return n, nil
}
