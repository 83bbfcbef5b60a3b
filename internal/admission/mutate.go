package admission

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/steward-oam/steward/api/v1beta1"
)

// DefaultPath is where the ComponentDefinition defaulting is served.
const DefaultPath = "/mutate-core-oam-dev-v1beta1-componentdefinitions"

// DefaultWorkload fills a ComponentDefinition's workload.type as
// KubeVela's mutating webhook does: from workload.definition, KubeVela's
// name of its kind (deployments.apps), or autodetects.core.oam.dev when
// both are empty. A definition naming a kind the cluster does not have is
// left as it is (the validating check refuses it). It says whether cd
// changed.
func DefaultWorkload(mapper meta.RESTMapper, cd *v1beta1.ComponentDefinition) bool {
	w := &cd.Spec.Workload
	switch {
	case w.Type != "":
		return false
	case w.Definition == (v1beta1.WorkloadGVK{}):
		w.Type = AutoDetectWorkload
		return true
	case mapper == nil:
		return false
	}
	m, refused, unknown := kindOnCluster(mapper, w.Definition.APIVersion, w.Definition.Kind)
	if refused != nil || unknown != nil {
		return false
	}
	w.Type = m.Resource.GroupResource().String()
	return true
}

// RegisterDefaulting serves DefaultWorkload on srv, at DefaultPath.
func RegisterDefaulting(srv webhook.Server, mapper meta.RESTMapper) {
	srv.Register(DefaultPath, &webhook.Admission{Handler: &defaulter{mapper: mapper}})
}

type defaulter struct{ mapper meta.RESTMapper }

// Handle patches a ComponentDefinition's workload.type; it never refuses.
func (d *defaulter) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Kind.Kind != "ComponentDefinition" || req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	cd := &v1beta1.ComponentDefinition{}
	if err := json.Unmarshal(req.Object.Raw, cd); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decoding ComponentDefinition: %w", err))
	}
	if !DefaultWorkload(d.mapper, cd) {
		return admission.Allowed("")
	}
	raw, err := json.Marshal(cd)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	ctrl.LoggerFrom(ctx).V(1).Info("Defaulted the workload type", "namespace", req.Namespace, "name", cd.Name, "type", cd.Spec.Workload.Type)
	return admission.PatchResponseFromRaw(req.Object.Raw, raw)
}

// MutatingConfiguration is Steward's MutatingWebhookConfiguration: the
// workload defaulting of ComponentDefinitions, on create and update, with
// failurePolicy Ignore like the validating one (a definition admitted
// undefaulted renders the same: Steward reads no workload.type).
func MutatingConfiguration(name string, cc ClientConfig, caBundle []byte) *admissionregistrationv1.MutatingWebhookConfiguration {
	ignore := admissionregistrationv1.Ignore
	none := admissionregistrationv1.SideEffectClassNone
	equivalent := admissionregistrationv1.Equivalent
	never := admissionregistrationv1.NeverReinvocationPolicy
	scope := admissionregistrationv1.NamespacedScope
	timeout := int32(TimeoutSeconds)
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app.kubernetes.io/managed-by": "steward"}},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:         "componentdefinitions.core.oam.dev",
			ClientConfig: cc.at(DefaultPath, caBundle),
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{v1beta1.GroupVersion.Group}, APIVersions: []string{v1beta1.GroupVersion.Version},
					Resources: []string{"componentdefinitions"}, Scope: &scope},
			}},
			FailurePolicy:           &ignore,
			MatchPolicy:             &equivalent,
			SideEffects:             &none,
			TimeoutSeconds:          &timeout,
			ReinvocationPolicy:      &never,
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
}

// EnsureMutatingConfiguration creates or updates want, keeping the
// caBundle the live configuration holds when want has none.
func EnsureMutatingConfiguration(ctx context.Context, c client.Client, want *admissionregistrationv1.MutatingWebhookConfiguration) error {
	return ensureWebhooks(ctx, c, "MutatingWebhookConfiguration", want, &admissionregistrationv1.MutatingWebhookConfiguration{},
		func(o *admissionregistrationv1.MutatingWebhookConfiguration) *[]admissionregistrationv1.MutatingWebhook {
			return &o.Webhooks
		},
		func(w *admissionregistrationv1.MutatingWebhook) *[]byte { return &w.ClientConfig.CABundle })
}

// MirrorCABundle keeps the caBundle of MutatingWebhookConfiguration name
// equal to that of ValidatingWebhookConfiguration name, which the
// certificate rotator (internal/webhookcert) injects, until ctx ends: it
// looks every second until the first copy, then every interval (a CA is
// added beside the old one long before the old one expires).
func MirrorCABundle(ctx context.Context, c client.Client, name string, interval time.Duration) {
	wait := time.Second
	for {
		if copied, err := mirrorCA(ctx, c, name); err != nil {
			ctrl.LoggerFrom(ctx).V(1).Info("Copying the webhook CA to the MutatingWebhookConfiguration failed; trying again", "name", name, "error", err.Error())
		} else if copied {
			wait = interval
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// mirrorCA copies the caBundle once; copied says both hold it.
func mirrorCA(ctx context.Context, c client.Client, name string) (copied bool, err error) {
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, vwc); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	if len(vwc.Webhooks) == 0 || len(vwc.Webhooks[0].ClientConfig.CABundle) == 0 {
		return false, nil
	}
	ca := vwc.Webhooks[0].ClientConfig.CABundle
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, mwc); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	changed := false
	for i := range mwc.Webhooks {
		if !bytes.Equal(mwc.Webhooks[i].ClientConfig.CABundle, ca) {
			mwc.Webhooks[i].ClientConfig.CABundle = ca
			changed = true
		}
	}
	if changed {
		if err := c.Update(ctx, mwc); err != nil {
			return false, err
		}
		ctrl.LoggerFrom(ctx).V(1).Info("Copied the webhook CA", "mutatingWebhookConfiguration", name)
	}
	return true, nil
}
