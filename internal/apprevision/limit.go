package apprevision

import (
	"slices"

	"github.com/steward-oam/steward/api/v1beta1"
)

// DefaultLimit is --application-revision-limit's default, KubeVela's.
const DefaultLimit = 10

// Sorted returns revs ordered by revision number, oldest first (names
// without a number first, by name), as KubeVela's CLI orders them.
func Sorted(revs []v1beta1.ApplicationRevision) []v1beta1.ApplicationRevision {
	out := slices.Clone(revs)
	slices.SortStableFunc(out, func(a, b v1beta1.ApplicationRevision) int {
		na, _ := NumberOf(a.Name)
		nb, _ := NumberOf(b.Name)
		if na != nb {
			if na < nb {
				return -1
			}
			return 1
		}
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out
}

// Beyond returns the names of the revisions to delete so that at most
// limit revisions are kept besides those in use (the live one, and any
// other the caller still needs), oldest first: KubeVela's rule
// (len(revs) - limit - in use, the oldest not in use go). A negative
// limit keeps everything.
func Beyond(revs []v1beta1.ApplicationRevision, inUse map[string]bool, limit int) []string {
	if limit < 0 {
		return nil
	}
	sorted := Sorted(revs)
	used := 0
	for _, r := range sorted {
		if inUse[r.Name] {
			used++
		}
	}
	kill := len(sorted) - limit - used
	var out []string
	for _, r := range sorted {
		if kill <= 0 {
			break
		}
		if inUse[r.Name] {
			continue
		}
		out = append(out, r.Name)
		kill--
	}
	return out
}

// Trim returns the names of the revisions to delete, oldest first, so
// that at most limit are kept besides the live one, never the live one
// nor one a kept tracker names (tracked: a revision goes with its
// version's tracker, which may be kept past the limit as the record of
// objects a rule keeps). Tracked revisions count toward the limit first:
// the others fill what they leave of it. A negative limit keeps
// everything.
func Trim(revs []v1beta1.ApplicationRevision, live string, tracked map[string]bool, limit int) []string {
	if limit < 0 {
		return nil
	}
	inUse := map[string]bool{live: true}
	used := 0
	for _, r := range revs {
		if r.Name == live || tracked[r.Name] {
			inUse[r.Name] = true
			used++
		}
	}
	return Beyond(revs, inUse, max(limit+1-used, 0))
}

// Next is the number of the next revision: one past the highest of the
// Application's status.latestRevision and the revisions that exist, so
// a number is never reused while a revision of it may still be read.
func Next(latest *v1beta1.Revision, revs []v1beta1.ApplicationRevision) int64 {
	var top int64
	if latest != nil {
		if n, ok := NumberOf(latest.Name); ok {
			top = n
		}
	}
	for _, r := range revs {
		if n, ok := NumberOf(r.Name); ok && n > top {
			top = n
		}
	}
	return top + 1
}

// ForVersion returns the revision recorded for a publishVersion (the
// newest if several are), nil when none is: a rollback by publishVersion
// takes up its revision again rather than writing a new one.
func ForVersion(revs []v1beta1.ApplicationRevision, publishVersion string) *v1beta1.ApplicationRevision {
	if publishVersion == "" {
		return nil
	}
	sorted := Sorted(revs)
	for i := len(sorted) - 1; i >= 0; i-- {
		if PublishVersionOf(&sorted[i]) == publishVersion {
			return &sorted[i]
		}
	}
	return nil
}
