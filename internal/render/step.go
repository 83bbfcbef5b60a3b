package render

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/steward-oam/steward/internal/cueeval"
)

// KindStep is the kind of a workflow step definition.
const KindStep = cueeval.KindStep

// StepSource is a step definition's template as the evaluator takes it
// (cached by the definition's UID, resourceVersion and text).
func (r *Renderer) StepSource(meta *metav1.ObjectMeta, template string) cueeval.Source {
	return r.source(KindStep, "", meta, template)
}

// EvaluateStep evaluates a step definition's template once, within the
// evaluation budget (cueeval.StepInput says what one evaluation does).
// tenant is the Application's namespace: a definition that busts the
// budget there is not evaluated again for a while.
func (r *Renderer) EvaluateStep(in *cueeval.StepInput, tenant string) (*cueeval.StepRound, *Error) {
	res, err := r.evaluate(&cueeval.Request{Tenant: tenant, Step: in}, in.Source)
	if err != nil {
		return nil, err
	}
	return res.Step, nil
}
