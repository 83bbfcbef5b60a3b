package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/steward-oam/steward/api/v1beta1"
)

// The paths the webhook serves.
const (
	ApplicationPath = "/validate-core-oam-dev-v1beta1-applications"
	DefinitionPath  = "/validate-core-oam-dev-v1beta1-definitions"
)

// DefaultTimeout bounds one check: under the configuration's
// timeoutSeconds (5), so that the answer always reaches the API server.
const DefaultTimeout = 3 * time.Second

// DefaultMaxChecks bounds the checks running at once. A check may outlive
// its answer (it runs to 4×timeout), so without a bound a flood of writes
// would queue evaluations without end.
const DefaultMaxChecks = 8

// Options tune the checks Register serves.
type Options struct {
	// Timeout bounds the wait for one check's answer; DefaultTimeout
	// when zero.
	Timeout time.Duration
	// MaxChecks bounds the checks running at once, across both paths;
	// DefaultMaxChecks when zero. A request that finds them all busy is
	// admitted unchecked at once, with a warning.
	MaxChecks int
}

// Register serves the Application and definition checks on srv. A check
// that takes longer than timeout admits the object with a warning: the
// controller checks it again and reports what it finds as a condition.
// At most DefaultMaxChecks run at once; see RegisterWithOptions.
func Register(srv webhook.Server, c *Checker, timeout time.Duration) {
	RegisterWithOptions(srv, c, Options{Timeout: timeout})
}

// RegisterWithOptions is Register with every option.
func RegisterWithOptions(srv webhook.Server, c *Checker, opts Options) {
	h := newHandler(c, opts)
	srv.Register(ApplicationPath, &webhook.Admission{Handler: h})
	srv.Register(DefinitionPath, &webhook.Admission{Handler: h})
}

func newHandler(c *Checker, opts Options) *handler {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxChecks <= 0 {
		opts.MaxChecks = DefaultMaxChecks
	}
	return &handler{checker: c, timeout: opts.Timeout, running: make(chan struct{}, opts.MaxChecks)}
}

type handler struct {
	checker *Checker
	timeout time.Duration
	// running holds a token per check running: a check takes one before
	// it starts and gives it back when it ends, which may be after its
	// answer was sent.
	running chan struct{}
	// check replaces the Checker; for tests only.
	check func(ctx context.Context, obj client.Object) Result
}

// run checks obj with the Checker (or the test's check).
func (h *handler) run(ctx context.Context, obj client.Object) Result {
	if h.check != nil {
		return h.check(ctx, obj)
	}
	if app, ok := obj.(*v1beta1.Application); ok {
		return h.checker.Application(ctx, app)
	}
	return h.checker.Definition(ctx, obj)
}

// Handle checks one request.
func (h *handler) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	obj, spec := newObject(req.Kind.Kind)
	if obj == nil {
		return admission.Allowed("not a kind Steward checks")
	}
	if err := json.Unmarshal(req.Object.Raw, obj); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decoding %s: %w", req.Kind.Kind, err))
	}
	if obj.GetNamespace() == "" {
		obj.SetNamespace(req.Namespace)
	}
	if !obj.GetDeletionTimestamp().IsZero() {
		return admission.Allowed("being deleted")
	}
	if req.Operation == admissionv1.Update && len(req.OldObject.Raw) > 0 {
		old, oldSpec := newObject(req.Kind.Kind)
		if err := json.Unmarshal(req.OldObject.Raw, old); err == nil && equality.Semantic.DeepEqual(spec(), oldSpec()) {
			// Metadata or status only (Steward's own finalizer, a label):
			// nothing the checks look at changed, but for the annotations
			// that conflict with each other, when this update makes them.
			if errs := newMetadataErrors(obj, old); len(errs) > 0 {
				ctrl.LoggerFrom(ctx).V(1).Info("Refused at admission", "kind", req.Kind.Kind, "namespace", obj.GetNamespace(), "name", obj.GetName(),
					"errors", Result{Errors: errs}.summary())
				return refusal(req, obj, errs, nil)
			}
			return admission.Allowed("spec unchanged")
		}
	}
	log := ctrl.LoggerFrom(ctx).WithValues("kind", req.Kind.Kind, "namespace", obj.GetNamespace(), "name", obj.GetName())
	select {
	case h.running <- struct{}{}:
	default:
		// As many checks as allowed are running (some may be past their
		// answer): admit now rather than queue, as on a timeout.
		log.V(1).Info("Admitted unchecked: too many checks running", "running", cap(h.running))
		return admission.Allowed("").WithWarnings(fmt.Sprintf("steward: not checked: %d checks are already running; the controller reports any problem in the status conditions", cap(h.running)))
	}
	done := make(chan Result, 1)
	go func() {
		defer func() { <-h.running }()
		// Not bound to ctx: an evaluation runs to its own budget; its
		// answer is dropped if it comes too late.
		checkCtx, cancel := context.WithTimeout(context.Background(), 4*h.timeout)
		defer cancel()
		done <- h.run(checkCtx, obj)
	}()
	var res Result
	select {
	case res = <-done:
	case <-time.After(h.timeout):
		log.V(1).Info("Admitted unchecked: the check took too long", "timeout", h.timeout)
		return admission.Allowed("").WithWarnings(fmt.Sprintf("steward: not checked within %s; the controller reports any problem in the status conditions", h.timeout))
	case <-ctx.Done():
		return admission.Allowed("").WithWarnings("steward: not checked; the controller reports any problem in the status conditions")
	}
	warnings := make([]string, 0, len(res.Warnings))
	for _, w := range res.Warnings {
		warnings = append(warnings, "steward: "+w)
	}
	if len(res.Errors) == 0 {
		if len(warnings) > 0 {
			log.V(1).Info("Admitted with warnings", "warnings", warnings)
		}
		return admission.Allowed("").WithWarnings(warnings...)
	}
	log.V(1).Info("Refused at admission", "errors", res.summary())
	return refusal(req, obj, res.Errors, warnings)
}

// refusal refuses obj as invalid, naming the fields of errs.
func refusal(req admission.Request, obj client.Object, errs field.ErrorList, warnings []string) admission.Response {
	status := apierrors.NewInvalid(schema.GroupKind{Group: v1beta1.GroupVersion.Group, Kind: req.Kind.Kind}, obj.GetName(), errs).ErrStatus
	return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: false, Result: &status, Warnings: warnings}}
}

// newObject returns an empty object of kind and a function returning its
// spec, or nil for a kind Steward does not check.
func newObject(kind string) (client.Object, func() any) {
	switch kind {
	case "Application":
		o := &v1beta1.Application{}
		return o, func() any { return o.Spec }
	case "ComponentDefinition":
		o := &v1beta1.ComponentDefinition{}
		return o, func() any { return o.Spec }
	case "TraitDefinition":
		o := &v1beta1.TraitDefinition{}
		return o, func() any { return o.Spec }
	case "PolicyDefinition":
		o := &v1beta1.PolicyDefinition{}
		return o, func() any { return o.Spec }
	case "WorkflowStepDefinition":
		o := &v1beta1.WorkflowStepDefinition{}
		return o, func() any { return o.Spec }
	}
	return nil, nil
}
