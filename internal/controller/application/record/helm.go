package record

import (
	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/application/facts"
	"github.com/steward-oam/steward/internal/tracker"
)

// ReleasesOf reads the releases a tracker notes.
func ReleasesOf(rt *v1beta1.ResourceTracker) []*facts.HelmRelease {
	var out []*facts.HelmRelease
	tracker.DecodeMark(rt, tracker.AnnotationHelmReleases, &out)
	return out
}
