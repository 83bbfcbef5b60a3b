package wake

import (
	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/version"
)

// Frozen reports whether an Application asks for another controller than
// Steward (annotation app.oam.dev/controller-version-require, as KubeVela
// reads it: present and not the version Steward carries, version.KubeVela),
// and what it asks for. KubeVela's CLI freezes an Application so around a
// rollback; a frozen Application is not reconciled until the annotation
// goes or names version.KubeVela.
func Frozen(app *v1beta1.Application) (string, bool) {
	req, ok := app.Annotations[v1beta1.AnnotationControllerRequirement]
	return req, ok && req != version.KubeVela
}
