package render

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cueeval"
)

// newStatusInput encodes the context and parameter of one status
// evaluation once, for every status part.
func newStatusInput(ctx map[string]any, params any) (*cueeval.StatusInput, error) {
	c, err := json.Marshal(ctx)
	if err != nil {
		return nil, fmt.Errorf("encoding context: %w", err)
	}
	if params == nil {
		params = map[string]any{}
	}
	p, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("encoding parameter: %w", err)
	}
	return &cueeval.StatusInput{Context: c, Params: p}, nil
}

// evalStatus computes a Health from a definition's spec.status. A missing
// status or healthPolicy is healthy, as in KubeVela. Errors of the three
// templates are joined; the Health returned with them is still the one to
// report: unhealthy when the health policy failed, and with the error as
// message when customStatus produced none. An evaluation stopped by its
// budget is unhealthy with reason EvaluationBudgetExceeded.
func (r *Renderer) evalStatus(kind string, meta *metav1.ObjectMeta, st *v1beta1.Status, in *cueeval.StatusInput, tenant string) (Health, error) {
	h := Health{Healthy: true}
	if st == nil {
		return h, nil
	}
	part := func(name, text string) *cueeval.Source {
		if text == "" {
			return nil
		}
		src := r.source(kind, name, meta, text)
		return &src
	}
	in.HealthPolicy = part(cueeval.PartHealthPolicy, st.HealthPolicy)
	in.CustomStatus = part(cueeval.PartCustomStatus, st.CustomStatus)
	in.Details = part(cueeval.PartDetails, st.Details)
	if in.HealthPolicy == nil && in.CustomStatus == nil && in.Details == nil {
		return h, nil
	}
	whole := cueeval.Source{Kind: kind, Namespace: meta.Namespace, Name: meta.Name, Part: "status"}
	res, rerr := r.evaluate(&cueeval.Request{Status: in, Tenant: tenant}, whole)
	if rerr != nil {
		return Health{Message: strings.ReplaceAll(rerr.Error(), "\n", "; "), Reason: budgetReason(rerr)}, rerr
	}
	out := res.Status
	if out == nil {
		err := fmt.Errorf("evaluating %s: the evaluator answered without a result", whole.Describe())
		return Health{Message: err.Error()}, err
	}
	var errs []error
	if in.HealthPolicy != nil {
		h.Healthy = out.Healthy && out.HealthErr == ""
		if out.HealthErr != "" {
			errs = append(errs, fmt.Errorf("status.healthPolicy: %s", out.HealthErr))
		}
	}
	if in.CustomStatus != nil {
		h.Message = out.Message
		if out.MessageErr != "" {
			errs = append(errs, fmt.Errorf("status.customStatus: %s", out.MessageErr))
		}
	}
	if in.Details != nil {
		h.Details = out.Details
		if out.DetailsErr != "" {
			errs = append(errs, fmt.Errorf("status.details: %s", out.DetailsErr))
		}
	}
	if len(errs) == 0 {
		return h, nil
	}
	err := fmt.Errorf("%s %q: %w", kind, meta.Name, errors.Join(errs...))
	if h.Message == "" {
		h.Message = strings.ReplaceAll(err.Error(), "\n", "; ")
	}
	return h, err
}

// liveData is a live object as a status template sees it: everything the
// API server returned, status included, less the bookkeeping that no
// template reads and that would only cost encoding time (managedFields and
// last-applied annotations). The caller's object is not modified.
func liveData(u *unstructured.Unstructured) map[string]any {
	obj := make(map[string]any, len(u.Object))
	for k, v := range u.Object {
		obj[k] = v
	}
	md, ok := u.Object["metadata"].(map[string]any)
	if !ok {
		return obj
	}
	meta := make(map[string]any, len(md))
	for k, v := range md {
		meta[k] = v
	}
	delete(meta, "managedFields")
	if anns, ok := md["annotations"].(map[string]any); ok {
		kept := make(map[string]any, len(anns))
		for k, v := range anns {
			if k != v1beta1.AnnotationLastApplied && k != kubectlLastApplied {
				kept[k] = v
			}
		}
		meta["annotations"] = kept
	}
	obj["metadata"] = meta
	return obj
}

// kubectlLastApplied is the annotation `kubectl apply` records its input in.
const kubectlLastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// budgetReason is the Health reason of an evaluation that failed: the
// budget's when it stopped it, else none (the message says what failed).
func budgetReason(e *Error) string {
	if e.Reason == v1beta1.ReasonEvaluationBudgetExceeded {
		return e.Reason
	}
	return ""
}
