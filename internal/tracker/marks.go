package tracker

import (
	"encoding/json"
	"strconv"

	"github.com/steward-oam/steward/api/v1beta1"
)

// Marks: the annotations Steward writes on its trackers, each with one
// meaning. This file is their one home: the keys, and typed accessors for
// reading them (Mark, DecodeMark and the getters below); writers set them
// through Store.Annotate, Store.SaveMarked or the marks of Store.Save.
const (
	// AnnotationPlacements records the placements ("cluster/namespace",
	// sorted, comma-separated) a version was rendered for, so that a
	// re-sync can tell whether a topology policy's clusters moved.
	AnnotationPlacements = "app.oam.dev/placements"
	// AnnotationDispatchPending marks a version recorded ("new") or rolled
	// back to ("rollback") whose dispatch has not finished: the next pass
	// dispatches it.
	AnnotationDispatchPending = "app.oam.dev/dispatch-pending"
	// AnnotationWorkflowSteps records the steps of a workflow with suspend
	// steps as the version was rendered (internal/workflow): the version's
	// objects name their step, and the run follows these steps whatever
	// the spec says later.
	AnnotationWorkflowSteps = "app.oam.dev/workflow-steps"
	// AnnotationWorkflowInputs records, on a versioned tracker whose
	// workflow steps take inputs, the generation it was rendered from and
	// the values each such step's objects were rendered with.
	AnnotationWorkflowInputs = "app.oam.dev/workflow-inputs"
	// AnnotationWorkflowOutputs records, on a versioned tracker, the
	// values the steps of its current run exported, with the run they
	// belong to.
	AnnotationWorkflowOutputs = "app.oam.dev/workflow-outputs"
	// AnnotationParallelism records, on a versioned tracker, the
	// smallest parallelism its deploy steps set: at most that many of its
	// clusters are worked on at once.
	AnnotationParallelism = "app.oam.dev/parallelism"
	// AnnotationRootObjects marks a versioned tracker that records, with
	// their manifests, the objects of its version that the root tracker
	// keeps for the Application's lifetime too (value RootObjectsRecorded),
	// so that a rollback to it applies what it rendered of them. Versions
	// recorded before Steward did so lack it: what they delivered of the
	// root tracker's objects is not known (see RecordsRootObjects).
	AnnotationRootObjects = "app.oam.dev/root-objects"
	// AnnotationPostDispatch records, on a versioned tracker, how each
	// placement's PostDispatch traits last rendered (JSON: placement to
	// the error when they could not).
	AnnotationPostDispatch = "app.oam.dev/post-dispatch"
	// AnnotationHelmReleases records, on a versioned tracker, the Helm
	// releases its version installs (JSON: name, namespace, cluster,
	// component, chart and the revision written).
	AnnotationHelmReleases = "app.oam.dev/helm-releases"
	// AnnotationDefinitions marks a version of an autoUpdate Application
	// with the fingerprint of the definitions it was rendered with: a
	// different fingerprint renders it again.
	AnnotationDefinitions = "app.oam.dev/definitions-fingerprint"
	// AnnotationCollectedAgainst stamps an older tracker with the live
	// version ("<tracker>@<generation>") its garbage was last collected
	// against: later passes cost nothing until the live version changes.
	AnnotationCollectedAgainst = "app.oam.dev/collected-against"
	// AnnotationComponentRevisions records, on the tracker of an
	// Application's first version, the revision of each component (JSON:
	// a list of component, revision, hash and applicationGeneration): the
	// component-revision tracker is written from the second version on,
	// starting from these.
	AnnotationComponentRevisions = "app.oam.dev/component-revisions"
	// AnnotationSpecDigest is a digest of the Application's spec a
	// version was rendered from (workflow.SpecDigest: of its JSON, so a
	// new spec field without omitempty changes every digest, and versions
	// whose revision is missing then get none written): its
	// ApplicationRevision is written only from that spec (a rollback, or
	// a spec edited under the same publishVersion, keeps the version as
	// recorded).
	AnnotationSpecDigest = "app.oam.dev/spec-digest"
)

// RootObjectsRecorded is the value of AnnotationRootObjects.
const RootObjectsRecorded = "recorded"

// RecordsRootObjects reports whether a versioned tracker records the
// objects of its version that the root tracker keeps, so that an object
// it does not list is one its version did not render.
func RecordsRootObjects(rt *v1beta1.ResourceTracker) bool {
	return rt != nil && rt.Annotations[AnnotationRootObjects] == RootObjectsRecorded
}

// Mark returns the value of mark key on rt; "" when rt is nil or carries
// none.
func Mark(rt *v1beta1.ResourceTracker, key string) string {
	if rt == nil {
		return ""
	}
	return rt.Annotations[key]
}

// DecodeMark decodes the JSON mark key of rt into v, and reports whether rt
// carries it and it decoded; v is left as it was otherwise.
func DecodeMark(rt *v1beta1.ResourceTracker, key string, v any) bool {
	raw := Mark(rt, key)
	return raw != "" && json.Unmarshal([]byte(raw), v) == nil
}

// Parallelism is AnnotationParallelism of rt; 0 for none (no bound).
func Parallelism(rt *v1beta1.ResourceTracker) int {
	n, _ := strconv.Atoi(Mark(rt, AnnotationParallelism))
	return n
}
