package admission

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
)

// The rules of KubeVela's own webhook (pkg/webhook/core.oam.dev/v1beta1)
// that Steward's render path does not already enforce, with KubeVela's
// messages where a tool or a user's script matches on them.

// AutoDetectWorkload is the workload type of a ComponentDefinition that
// names no workload: the kind is read from what its template renders.
const AutoDetectWorkload = "autodetects.core.oam.dev"

// duplicateComponents refuses two components of one name (KubeVela:
// "duplicated component name web").
func duplicateComponents(app *v1beta1.Application) field.ErrorList {
	var out field.ErrorList
	seen := map[string]bool{}
	for i, comp := range app.Spec.Components {
		if seen[comp.Name] {
			out = append(out, field.Duplicate(field.NewPath("spec", "components").Index(i).Child("name"),
				fmt.Sprintf("duplicated component name %s", comp.Name)))
		}
		seen[comp.Name] = true
	}
	return out
}

// metadataErrors are the refusals that read only an object's metadata
// (and version): checked also on updates that change no spec, since an
// annotation alone makes them.
func metadataErrors(obj client.Object) field.ErrorList {
	if app, ok := obj.(*v1beta1.Application); ok {
		a := app.GetAnnotations()
		if a[v1beta1.AnnotationAutoUpdate] == "true" && a[v1beta1.AnnotationPublishVersion] != "" {
			return field.ErrorList{field.Forbidden(field.NewPath("metadata", "annotations"),
				fmt.Sprintf("Application has both autoUpdate and publishVersion annotations. Only one can be present (%s, %s)",
					v1beta1.AnnotationAutoUpdate, v1beta1.AnnotationPublishVersion))}
		}
		return nil
	}
	if specVersion(obj) != "" && obj.GetAnnotations()[v1beta1.AnnotationDefinitionRevisionName] != "" {
		return field.ErrorList{field.Forbidden(field.NewPath("spec", "version"),
			fmt.Sprintf("%s has both spec.version and revision name annotation. Only one can be present (%s)",
				kindOf(obj), v1beta1.AnnotationDefinitionRevisionName))}
	}
	return nil
}

// newMetadataErrors are metadataErrors that obj has and old had not: an
// object admitted while the webhook was down keeps taking the metadata
// writes of its controllers (finalizers, status marks) unchanged.
func newMetadataErrors(obj, old client.Object) field.ErrorList {
	errs := metadataErrors(obj)
	if len(errs) > 0 && old != nil && len(metadataErrors(old)) > 0 {
		return nil
	}
	return errs
}

func specVersion(obj client.Object) string {
	switch d := obj.(type) {
	case *v1beta1.ComponentDefinition:
		return d.Spec.Version
	case *v1beta1.TraitDefinition:
		return d.Spec.Version
	case *v1beta1.PolicyDefinition:
		return d.Spec.Version
	case *v1beta1.WorkflowStepDefinition:
		return d.Spec.Version
	}
	return ""
}

func kindOf(obj client.Object) string {
	switch obj.(type) {
	case *v1beta1.ComponentDefinition:
		return "ComponentDefinition"
	case *v1beta1.TraitDefinition:
		return "TraitDefinition"
	case *v1beta1.PolicyDefinition:
		return "PolicyDefinition"
	case *v1beta1.WorkflowStepDefinition:
		return "WorkflowStepDefinition"
	case *v1beta1.Application:
		return "Application"
	}
	return "definition"
}

// kindOnCluster maps apiVersion and kind on the cluster: refused is the
// definition's fault (a malformed apiVersion, a kind the cluster does not
// have), unknown the cluster's (discovery failing), to warn of.
func kindOnCluster(mapper meta.RESTMapper, apiVersion, kind string) (m *meta.RESTMapping, refused, unknown error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, fmt.Errorf("malformed apiVersion %q: %w", apiVersion, err), nil
	}
	if gv.Version == "" {
		return nil, fmt.Errorf("malformed apiVersion %q: no version", apiVersion), nil
	}
	m, err = mapper.RESTMapping(gv.WithKind(kind).GroupKind(), gv.Version)
	switch {
	case meta.IsNoMatchError(err):
		return nil, err, nil
	case err != nil:
		return nil, nil, err
	}
	return m, nil, nil
}

// checkWorkload refuses a ComponentDefinition whose workload.type and
// workload.definition name different workloads, or whose
// workload.definition names a kind the cluster does not have, as
// KubeVela's webhook does; the type a definition stands for is KubeVela's
// name of it, resource and group (deployments.apps; configmaps for a core
// kind). Both empty is admitted: the mutating webhook (Default) fills
// autodetects.core.oam.dev, and Steward renders without it.
func (c *Checker) checkWorkload(cd *v1beta1.ComponentDefinition, res *Result) {
	w := cd.Spec.Workload
	if c.Mapper == nil || w.Definition == (v1beta1.WorkloadGVK{}) {
		return
	}
	m, refused, unknown := kindOnCluster(c.Mapper, w.Definition.APIVersion, w.Definition.Kind)
	switch {
	case refused != nil:
		res.Errors = append(res.Errors, invalid(field.NewPath("spec", "workload", "definition"),
			fmt.Sprintf("%s %s: %v", w.Definition.APIVersion, w.Definition.Kind, refused)))
	case unknown != nil:
		res.warn("spec.workload.definition not checked: %v", unknown)
	case w.Type != "" && w.Type != m.Resource.GroupResource().String():
		res.Errors = append(res.Errors, invalid(field.NewPath("spec", "workload", "type"),
			fmt.Sprintf("the type and the definition of the workload field in ComponentDefinition %s should represent the same workload (type %q, definition %s %s is %q)",
				cd.Name, w.Type, w.Definition.APIVersion, w.Definition.Kind, m.Resource.GroupResource().String())))
	}
}

// isAddonDefinition says def is installed by an addon (owned by, or
// labelled with, an addon-* Application, or annotated addons.oam.dev/name):
// an addon brings the CRDs its definitions output with it, perhaps in the
// same apply, so their kinds are not checked, as KubeVela skips them.
func isAddonDefinition(def client.Object) bool {
	for _, o := range def.GetOwnerReferences() {
		if o.Kind == "Application" && o.APIVersion == v1beta1.GroupVersion.String() && strings.HasPrefix(o.Name, "addon-") {
			return true
		}
	}
	if strings.HasPrefix(def.GetLabels()["app.oam.dev/name"], "addon-") {
		return true
	}
	return def.GetAnnotations()["addons.oam.dev/name"] != ""
}
