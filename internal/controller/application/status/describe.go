package status

import (
	"fmt"
	"strings"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/application/facts"
	"github.com/steward-oam/steward/internal/tracker"
)

// FailureListLimit bounds how many failed objects a condition message names.
const FailureListLimit = 5

func KeysString(keys []tracker.Key, limit int) string {
	parts := make([]string, 0, min(len(keys), limit))
	for i, k := range keys {
		if i == limit {
			parts = append(parts, fmt.Sprintf("and %d more", len(keys)-limit))
			break
		}
		parts = append(parts, k.String())
	}
	return strings.Join(parts, ", ")
}

// DescribeFailures renders failures for a condition message.
func DescribeFailures(fs []facts.Failure, limit int) string {
	msg := ""
	for i, f := range fs {
		if i == limit {
			msg += fmt.Sprintf("; and %d more", len(fs)-limit)
			break
		}
		if i > 0 {
			msg += "; "
		}
		if f.Component != "" {
			msg += fmt.Sprintf("component %q: ", f.Component)
		}
		msg += f.Err.Error()
	}
	return msg
}

// DescribeConflicts renders "took spec.replicas of Deployment default/web
// from kubectl-edit (the manifest sets it)"; "" for none.
func DescribeConflicts(cs []facts.FieldConflict) string {
	if len(cs) == 0 {
		return ""
	}
	parts := make([]string, 0, min(len(cs), FailureListLimit+1))
	for i, c := range cs {
		if i == FailureListLimit {
			parts = append(parts, fmt.Sprintf("and %d more", len(cs)-FailureListLimit))
			break
		}
		parts = append(parts, fmt.Sprintf("%s of %s from %q", c.Field, c.Key, c.Manager))
	}
	return "took fields other field managers had set, because the manifest sets them: " + strings.Join(parts, ", ")
}

// DescribeChanges renders "created Deployment default/web, configured
// Service default/web".
func DescribeChanges(cs []facts.Change) string {
	parts := make([]string, 0, min(len(cs), FailureListLimit+1))
	for i, c := range cs {
		if i == FailureListLimit {
			parts = append(parts, fmt.Sprintf("and %d more", len(cs)-FailureListLimit))
			break
		}
		part := fmt.Sprintf("%s (%s)", c.Key, c.Action)
		if len(c.Fields) > 0 {
			part = fmt.Sprintf("%s (%s: %s)", c.Key, c.Action, strings.Join(c.Fields, ", "))
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, ", ")
}

// UnsupportedFeatures names the KubeVela features an Application uses
// that Steward does not carry and that change nothing it delivers, so
// that none is ignored silently; "" when there are none. Features that
// would change what is delivered are refused instead (see
// docs/compatibility.md).
func UnsupportedFeatures(app *v1beta1.Application, revisions bool) string {
	var out []string
	if _, ok := app.Annotations[v1beta1.AnnotationAutoUpdate]; ok && !revisions {
		out = append(out, "annotation app.oam.dev/autoUpdate is not carried out: definition revisions are turned off (--definition-revisions=false), and changed definitions are rendered only when the Application's spec changes")
	}
	for _, c := range app.Spec.Components {
		if len(c.Scopes) > 0 {
			out = append(out, fmt.Sprintf("component %q: scopes are ignored (KubeVela's health scopes are not carried; health comes from each definition's health policy)", c.Name))
			break
		}
	}
	return strings.Join(out, "; ")
}
