package admission

import (
	"context"
	"fmt"
	"slices"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
)

// TimeoutSeconds is how long the API server waits for an answer. The
// checks answer within DefaultTimeout; past this, the API server admits the
// object (failurePolicy Ignore).
const TimeoutSeconds = 5

// ClientConfig says how the API server reaches the webhook: a Service in
// the cluster, or a URL (a Steward running outside the cluster, as
// `steward dev` runs it). Path is set per webhook.
type ClientConfig struct {
	Service *admissionregistrationv1.ServiceReference
	URL     string
}

func (c ClientConfig) at(path string, caBundle []byte) admissionregistrationv1.WebhookClientConfig {
	if c.Service != nil {
		svc := *c.Service
		svc.Path = &path
		return admissionregistrationv1.WebhookClientConfig{Service: &svc, CABundle: caBundle}
	}
	url := c.URL + path
	return admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caBundle}
}

// Configuration is Steward's ValidatingWebhookConfiguration: Applications
// and the four definition kinds, on create and update. failurePolicy is
// Ignore: when Steward is down or slow, objects are admitted and the
// controller reports problems as conditions, so the cluster is never
// blocked by it. The chart's templates/webhook.yaml is the same object.
func Configuration(name string, cc ClientConfig, caBundle []byte) *admissionregistrationv1.ValidatingWebhookConfiguration {
	ignore := admissionregistrationv1.Ignore
	none := admissionregistrationv1.SideEffectClassNone
	equivalent := admissionregistrationv1.Equivalent
	scope := admissionregistrationv1.NamespacedScope
	timeout := int32(TimeoutSeconds)
	hook := func(name, path string, resources ...string) admissionregistrationv1.ValidatingWebhook {
		return admissionregistrationv1.ValidatingWebhook{
			Name:         name,
			ClientConfig: cc.at(path, caBundle),
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{v1beta1.GroupVersion.Group}, APIVersions: []string{v1beta1.GroupVersion.Version},
					Resources: resources, Scope: &scope},
			}},
			FailurePolicy:           &ignore,
			MatchPolicy:             &equivalent,
			SideEffects:             &none,
			TimeoutSeconds:          &timeout,
			AdmissionReviewVersions: []string{"v1"},
		}
	}
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app.kubernetes.io/managed-by": "steward"}},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{
			hook("applications.core.oam.dev", ApplicationPath, "applications"),
			hook("definitions.core.oam.dev", DefinitionPath, "componentdefinitions", "traitdefinitions", "policydefinitions", "workflowstepdefinitions"),
		},
	}
}

// EnsureConfiguration creates or updates want, keeping the caBundle the
// live configuration holds when want has none (the certificate rotator
// injects it).
func EnsureConfiguration(ctx context.Context, c client.Client, want *admissionregistrationv1.ValidatingWebhookConfiguration) error {
	return ensureWebhooks(ctx, c, "ValidatingWebhookConfiguration", want, &admissionregistrationv1.ValidatingWebhookConfiguration{},
		func(o *admissionregistrationv1.ValidatingWebhookConfiguration) *[]admissionregistrationv1.ValidatingWebhook {
			return &o.Webhooks
		},
		func(w *admissionregistrationv1.ValidatingWebhook) *[]byte { return &w.ClientConfig.CABundle })
}

// ensureWebhooks creates or updates want, a validating or a mutating
// configuration (live is an empty one of its type), keeping the caBundle
// live holds for each webhook want gives none.
func ensureWebhooks[T client.Object, W any](ctx context.Context, c client.Client, kind string, want, live T, hooksOf func(T) *[]W, caOf func(*W) *[]byte) error {
	err := c.Get(ctx, client.ObjectKeyFromObject(want), live)
	if apierrors.IsNotFound(err) {
		if err := c.Create(ctx, want); err != nil {
			return fmt.Errorf("creating %s %s: %w", kind, want.GetName(), err)
		}
		ctrl.LoggerFrom(ctx).V(1).Info("Created the "+kind, "name", want.GetName())
		return nil
	}
	if err != nil {
		return err
	}
	liveHooks := *hooksOf(live)
	hooks := slices.Clone(*hooksOf(want))
	for i := range hooks {
		if ca := caOf(&hooks[i]); len(*ca) == 0 && i < len(liveHooks) {
			*ca = *caOf(&liveHooks[i])
		}
	}
	if equality.Semantic.DeepEqual(hooks, liveHooks) && equality.Semantic.DeepEqual(want.GetLabels(), live.GetLabels()) {
		return nil
	}
	*hooksOf(live) = hooks
	live.SetLabels(want.GetLabels())
	if err := c.Update(ctx, live); err != nil {
		return fmt.Errorf("updating %s %s: %w", kind, want.GetName(), err)
	}
	ctrl.LoggerFrom(ctx).V(1).Info("Updated the "+kind, "name", want.GetName())
	return nil
}
