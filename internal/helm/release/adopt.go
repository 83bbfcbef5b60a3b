package release

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/boundary"
)

// Helm marks every object it installs with the release it belongs to
// (since Helm 3.2); `helm upgrade` refuses an object whose marks name
// another release ("invalid ownership metadata"). Steward reads them the
// same way when it takes a release over.
const (
	annotationReleaseName      = "meta.helm.sh/release-name"
	annotationReleaseNamespace = "meta.helm.sh/release-namespace"
)

// labelTakenOver marks a record Steward took over from `helm install`:
// while one is in the history, Record takes over the release's objects
// too (AdoptObjects), so that a take-over the identity's RBAC cut short
// is finished once it allows it.
const labelTakenOver = "steward.oam.dev/taken-over"

// tookOver reports whether history holds a record taken over from Helm.
func tookOver(history []corev1.Secret) bool {
	for _, s := range history {
		if s.Labels[labelTakenOver] != "" {
			return true
		}
	}
	return false
}

// unclaimed reports whether a record carries no Application's labels:
// `helm install` or `helm upgrade` wrote it (or anything else that is
// not an Application), so it is a release an Application may take over.
func unclaimed(s corev1.Secret) bool {
	return s.Labels[v1beta1.LabelAppName] == "" && s.Labels[v1beta1.LabelAppNamespace] == ""
}

// adopt takes over a release whose newest record `helm install` wrote,
// as KubeVela does: every record of it that no Application claims gets
// owner's labels, so that the history continues under the Application
// (the next revision is the newest plus one, Deployed supersedes Helm's
// deployed revision, MaxHistory prunes and Uninstall deletes them). The
// release namespace is held to b first: a release is never taken over
// across the Application's boundary. Records another Application wrote
// are left as they are. c acts as the Application's identity, whose RBAC
// must allow patching the Secrets. It returns history as labelled.
func adopt(ctx context.Context, c client.Client, b boundary.Boundary, name, namespace string, history []corev1.Secret, owner map[string]string) ([]corev1.Secret, error) {
	if err := b.CheckNamespace(fmt.Sprintf("helm release %q to take over", name), namespace); err != nil {
		return nil, err
	}
	for i := range history {
		s := &history[i]
		if !unclaimed(*s) {
			continue
		}
		base := s.DeepCopy()
		for k, v := range owner {
			s.Labels[k] = v
		}
		s.Labels[labelTakenOver] = "helm"
		if err := c.Patch(ctx, s, client.MergeFrom(base)); err != nil {
			return nil, fmt.Errorf("taking over helm release %q in namespace %q: labelling its record %s: %w", name, namespace, s.Name, err)
		}
		log.FromContext(ctx).V(1).Info("Took over a Helm release record helm install wrote", "release", name, "namespace", namespace, "record", s.Name)
	}
	return history, nil
}

// AdoptObjects takes over the objects of a release the Application now
// owns that `helm install` created (Record calls it while the history
// holds a record it took over): each of objs (the objects the
// release's chart renders now) that exists, carries no Application's
// labels and whose Helm marks name this release gets owner's labels, so
// that Steward applies it from then on in place (no take-over policy is
// needed: the release's record says whose it is). An object another
// Application owns, or one no Helm mark ties to the release, is not
// touched: applying it reports the conflict as usual. Each object is
// held to b before it is read, and c acts as the Application's identity
// (which must be allowed to get and patch it). It returns the objects
// taken over, as "Kind namespace/name".
func AdoptObjects(ctx context.Context, c client.Client, b boundary.Boundary, name, namespace string, objs []*unstructured.Unstructured, owner map[string]string) ([]string, error) {
	var adopted []string
	for _, obj := range objs {
		what := describe(obj)
		var err error
		if obj.GetNamespace() == "" {
			err = b.CheckClusterScoped(what)
		} else {
			err = b.CheckNamespace(what, obj.GetNamespace())
		}
		if err != nil {
			return adopted, err
		}
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(obj.GroupVersionKind())
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return adopted, fmt.Errorf("taking over %s of helm release %q: %w", what, name, err)
		}
		a := live.GetAnnotations()
		if live.GetLabels()[v1beta1.LabelAppName] != "" || a[annotationReleaseName] != name || a[annotationReleaseNamespace] != namespace {
			continue
		}
		base := live.DeepCopy()
		labels := live.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		for k, v := range owner {
			labels[k] = v
		}
		live.SetLabels(labels)
		if err := c.Patch(ctx, live, client.MergeFrom(base)); err != nil {
			return adopted, fmt.Errorf("taking over %s of helm release %q: %w", what, name, err)
		}
		log.FromContext(ctx).V(1).Info("Took over an object of a Helm release helm install made", "release", name, "namespace", namespace, "object", what)
		adopted = append(adopted, what)
	}
	return adopted, nil
}

func describe(obj *unstructured.Unstructured) string {
	if obj.GetNamespace() == "" {
		return obj.GetKind() + " " + obj.GetName()
	}
	return obj.GetKind() + " " + obj.GetNamespace() + "/" + obj.GetName()
}

// ManifestObjects reads a release manifest (YAML documents, as a record
// holds and AdoptObjects takes) back into its objects.
func ManifestObjects(manifest string) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(manifest), 4096)
	var out []*unstructured.Unstructured
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("the release manifest does not parse: %w", err)
		}
		if len(obj) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: obj})
	}
}
