package render

import (
	"maps"
	"strconv"
	"strings"

	"github.com/steward-oam/steward/api/v1beta1"
)

// appContext builds the application-level part of the CUE `context`, the
// same for every component and trait of an Application.
func appContext(app *v1beta1.Application, actx AppContext) map[string]any {
	publish := actx.PublishVersion
	if publish == "" {
		publish = app.Annotations[v1beta1.AnnotationPublishVersion]
	}
	return map[string]any{
		"appName":        app.Name,
		"namespace":      app.Namespace,
		"appRevision":    actx.AppRevision,
		"appRevisionNum": actx.AppRevisionNum,
		"appLabels":      stringMap(app.Labels),
		"appAnnotations": stringMap(app.Annotations),
		"publishVersion": publish,
		"clusterVersion": clusterVersion(actx.ClusterVersion),
		"cluster":        "",
		"replicaKey":     "",
	}
}

// componentContext adds the component's own keys to the application
// context. For traits, workload and auxiliaries become context.output and
// context.outputs.
func componentContext(base map[string]any, component string, revisionNum int64) map[string]any {
	ctx := maps.Clone(base)
	ctx["name"] = component
	ctx["revision"] = component + "-v" + strconv.FormatInt(max(revisionNum, 1), 10)
	return ctx
}

// clusterVersion renders context.clusterVersion. minor is an integer that
// definitions compare (`context.clusterVersion.minor < 23`); unknown is 0,
// so such definitions take their fallback branch, as KubeVela's do offline.
func clusterVersion(cv ClusterVersion) map[string]any {
	minor, _ := strconv.ParseInt(strings.TrimRight(strings.TrimSpace(cv.Minor), ".+-/?!"), 10, 64)
	return map[string]any{
		"major":      cv.Major,
		"minor":      minor,
		"gitVersion": cv.GitVersion,
		"platform":   "",
	}
}

func stringMap(in map[string]string) map[string]any {
	out := make(map[string]any, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}
