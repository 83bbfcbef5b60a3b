package render

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"cuelang.org/go/cue"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/steward-oam/steward/api/v1beta1"
)

// Parts of a definition's spec.status, each compiled and cached on its own:
// KubeVela evaluates them as separate CUE files, so two of them may declare
// the same hidden or regular field with different values.
const (
	partHealthPolicy = "status.healthPolicy"
	partCustomStatus = "status.customStatus"
	partDetails      = "status.details"
)

// statusDecl declares the two fields a status template reads and the
// renderer fills.
const statusDecl = "\ncontext: _\nparameter: _\n"

// maxDetailLabel is the longest status.details field name kept, as in
// KubeVela: details are meant to be short keys a user scans.
const maxDetailLabel = 31

var (
	pathIsHealth = cue.ParsePath("isHealth")
	pathMessage  = cue.ParsePath("message")
)

// compileStatus compiles one status template.
func compileStatus(src string) *compiled { return compileSource(src+statusDecl, false) }

// CheckStatus parses a definition's status templates and returns the first
// syntax error with its position, so the controller can report a
// definition whose health will never evaluate. Errors that depend on the
// live objects surface from ComponentHealth and TraitHealth instead.
func (r *Renderer) CheckStatus(kind, name string, st *v1beta1.Status) error {
	if st == nil {
		return nil
	}
	for _, p := range []struct{ part, src string }{
		{partHealthPolicy, st.HealthPolicy}, {partCustomStatus, st.CustomStatus}, {partDetails, st.Details},
	} {
		if p.src == "" {
			continue
		}
		if c := compileStatus(p.src); c.err != nil {
			return fmt.Errorf("%s %q: %s: %w", kind, name, p.part, c.err)
		}
	}
	return nil
}

// statusInput is the context and parameter of one status evaluation,
// encoded once and compiled into each status template's CUE context.
type statusInput struct {
	context   []byte
	parameter []byte
}

func newStatusInput(ctx map[string]any, params any) (statusInput, error) {
	c, err := json.Marshal(ctx)
	if err != nil {
		return statusInput{}, fmt.Errorf("encoding context: %w", err)
	}
	if params == nil {
		params = map[string]any{}
	}
	p, err := json.Marshal(params)
	if err != nil {
		return statusInput{}, fmt.Errorf("encoding parameter: %w", err)
	}
	return statusInput{context: c, parameter: p}, nil
}

// evalStatus computes a Health from a definition's spec.status. A missing
// status or healthPolicy is healthy, as in KubeVela. Errors of the three
// templates are joined; the Health returned with them is still the one to
// report: unhealthy when the health policy failed, and with the error as
// message when customStatus produced none.
func (r *Renderer) evalStatus(kind string, meta *metav1.ObjectMeta, st *v1beta1.Status, in statusInput) (Health, error) {
	h := Health{Healthy: true}
	if st == nil {
		return h, nil
	}
	var errs []error
	if st.HealthPolicy != "" {
		ok, err := r.cached(kind, partHealthPolicy, meta, st.HealthPolicy, compileStatus).isHealth(in)
		h.Healthy = ok && err == nil
		if err != nil {
			errs = append(errs, fmt.Errorf("status.healthPolicy: %w", err))
		}
	}
	if st.CustomStatus != "" {
		msg, err := r.cached(kind, partCustomStatus, meta, st.CustomStatus, compileStatus).message(in)
		h.Message = msg
		if err != nil {
			errs = append(errs, fmt.Errorf("status.customStatus: %w", err))
		}
	}
	if st.Details != "" {
		details, err := r.cached(kind, partDetails, meta, st.Details, compileStatus).details(in)
		h.Details = details
		if err != nil {
			errs = append(errs, fmt.Errorf("status.details: %w", err))
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

// fill evaluates a compiled status template with its input. The caller
// holds c.mu.
func (c *compiled) fill(in statusInput) (cue.Value, error) {
	if c.err != nil {
		return cue.Value{}, fmt.Errorf("template does not compile: %w", c.err)
	}
	ctxVal, err := c.source(in.context)
	if err != nil {
		return cue.Value{}, fmt.Errorf("context: %w", err)
	}
	paramVal, err := c.source(in.parameter)
	if err != nil {
		return cue.Value{}, fmt.Errorf("parameter: %w", err)
	}
	return c.value.FillPath(pathContext, ctxVal).FillPath(pathParameter, paramVal), nil
}

// isHealth evaluates a healthPolicy, which must produce a concrete
// `isHealth: bool`.
func (c *compiled) isHealth(in statusInput) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, err := c.fill(in)
	if err != nil {
		return false, err
	}
	hv := v.LookupPath(pathIsHealth)
	if !hv.Exists() {
		if err := v.Err(); err != nil {
			return false, flattenCUE(err, "", false)
		}
		return false, errors.New("isHealth is not set")
	}
	ok, err := hv.Bool()
	if err != nil {
		return false, flattenCUE(err, "", false)
	}
	return ok, nil
}

// message evaluates a customStatus, which produces `message: string`; no
// message is an empty one.
func (c *compiled) message(in statusInput) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, err := c.fill(in)
	if err != nil {
		return "", err
	}
	mv := v.LookupPath(pathMessage)
	if !mv.Exists() {
		return "", nil
	}
	s, err := mv.String()
	if err != nil {
		return "", flattenCUE(err, "", false)
	}
	return s, nil
}

// details evaluates status.details: every regular top-level field becomes
// one entry, except context and parameter, names starting with "$" or
// longer than maxDetailLabel, and fields marked @local() or @exclude().
// Strings are kept as they are, other values as JSON. A field that is not
// concrete (the live object lacks what it reads) is left out, so a user
// never reads "_|_".
func (c *compiled) details(in statusInput) (map[string]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, err := c.fill(in)
	if err != nil {
		return nil, err
	}
	it, err := v.Fields()
	if err != nil {
		return nil, flattenCUE(err, "", false)
	}
	out := map[string]string{}
	for it.Next() {
		label := it.Selector().Unquoted()
		if !keepDetail(label, it.Value()) {
			continue
		}
		s, ok := stringify(it.Value())
		if ok {
			out[label] = s
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

func keepDetail(label string, v cue.Value) bool {
	switch {
	case label == "context" || label == "parameter":
		return false
	case strings.HasPrefix(label, "$") || len(label) > maxDetailLabel:
		return false
	}
	for _, a := range v.Attributes(cue.FieldAttr) {
		if a.Name() == "local" || a.Name() == "exclude" {
			return false
		}
	}
	return true
}

// stringify renders a concrete value for status.details.
func stringify(v cue.Value) (string, bool) {
	if v.Validate(cue.Concrete(true)) != nil {
		return "", false
	}
	if s, err := v.String(); err == nil {
		return s, true
	}
	b, err := v.MarshalJSON()
	if err != nil {
		return "", false
	}
	return string(b), true
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
