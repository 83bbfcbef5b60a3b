package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/bench/measure"
	"github.com/steward-oam/steward/bench/record"
	"github.com/steward-oam/steward/internal/tracker"
)

// bigApp times the dispatch of one Application with many objects and
// sizes its ResourceTrackers.
func (r *runner) bigApp(ctx context.Context, s *session) error {
	cfg := r.opts.Profile.BigApp
	shape := ShapeOf(cfg.Resources)
	if err := EnsureNamespace(ctx, s.cp.Client, benchNamespace); err != nil {
		return err
	}
	if err := s.start(ctx); err != nil {
		return err
	}
	base, err := s.cp.Requests(ctx)
	if err != nil {
		return err
	}
	ownBase := s.cp.Own.Snapshot()
	start := time.Now()
	if err := CreateApplications(ctx, s.cp.Client, benchNamespace, 1, shape, nil); err != nil {
		return err
	}
	done, err := WaitReady(ctx, s.cp.Client, benchNamespace, 1, cfg.Timeout.D())
	if err != nil {
		return err
	}
	all, err := s.work(ctx, base, ownBase)
	if err != nil {
		return err
	}
	res := record.BigAppResult{Controller: s.controller.Name, Resources: shape.Resources(),
		Dispatch: record.Duration(done.Sub(start)), Requests: all.Filter(measure.IsWork).Total()}
	if err := sizeTrackers(ctx, s.cp.Client, AppName(0), &res); err != nil {
		return err
	}
	r.res.BigApp = append(r.res.BigApp, res)
	s.progress("%d objects dispatched in %s; %d trackers, raw %d B, stored %d B (%s)", res.Resources,
		res.Dispatch.D().Round(time.Millisecond), res.Trackers, res.RawBytes, res.StoredBytes, res.CompressionName())
	return nil
}

// sizeTrackers adds up the trackers of one Application.
func sizeTrackers(ctx context.Context, c client.Client, app string, res *record.BigAppResult) error {
	var list v1beta1.ResourceTrackerList
	if err := c.List(ctx, &list, client.MatchingLabels{v1beta1.LabelAppName: app, v1beta1.LabelAppNamespace: benchNamespace}); err != nil {
		return fmt.Errorf("listing resource trackers: %w", err)
	}
	for i := range list.Items {
		rt := &list.Items[i]
		entries, err := tracker.Decode(&rt.Spec)
		if err != nil {
			return fmt.Errorf("decoding resource tracker %s: %w", rt.Name, err)
		}
		raw, err := json.Marshal(entries)
		if err != nil {
			return err
		}
		stored := jsonSize(rt)
		res.Trackers++
		res.RawBytes += len(raw)
		res.StoredBytes += stored
		res.PerTracker = append(res.PerTracker, record.TrackerSize{Name: rt.Name, Type: string(rt.Spec.Type),
			Entries: len(entries), RawBytes: len(raw), StoredBytes: stored})
		if t := string(rt.Spec.Compression.Type); t != "" {
			res.Compression = t
		}
	}
	return nil
}
