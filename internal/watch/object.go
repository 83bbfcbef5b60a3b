package watch

import (
	"strings"
	"unique"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/apply"
)

// object is what the watch cache keeps of one managed object: its name,
// namespace and resourceVersion, the Application its ownership labels
// name, and the sharers of a shared resource. Namespaces, Applications and
// sharer lists are interned, so the objects of one app share them: a
// cached object is 56 bytes besides the strings of its name and
// resourceVersion, where a PartialObjectMetadata is 264 before its labels
// map and their strings.
//
// It implements metav1.Object for the informer's key function and store;
// the fields it does not keep read as zero and setting them does nothing.
type object struct {
	name, resourceVersion string
	namespace             unique.Handle[string]
	app                   unique.Handle[types.NamespacedName]
	// sharers is the shared-by annotation of a shared resource (zero for
	// any other object): every sharer is woken, not only the owner the
	// labels name.
	sharers unique.Handle[string]
}

var _ interface {
	metav1.Object
	runtime.Object
} = &object{}

// slim replaces a cached object with an *object: annotations but
// shared-by (the last-applied configuration is a whole manifest), managed
// fields, UID and every label but the ownership ones never stay in
// memory. It is idempotent, as a transform must be.
func slim(obj any) (any, error) {
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil
	}
	o := &object{
		name:            m.Name,
		resourceVersion: m.ResourceVersion,
		namespace:       unique.Make(m.Namespace),
		app: unique.Make(types.NamespacedName{
			Namespace: m.Labels[v1beta1.LabelAppNamespace],
			Name:      m.Labels[v1beta1.LabelAppName],
		}),
	}
	o.SetAnnotations(m.Annotations)
	return o, nil
}

// apps returns the Applications an event on the object concerns: the
// owner its labels name and every other sharer of a shared resource.
func (o *object) apps() []types.NamespacedName {
	owner := o.owner()
	apps := []types.NamespacedName{owner}
	if o.sharers == (unique.Handle[string]{}) {
		return apps
	}
	for _, s := range strings.Split(o.sharers.Value(), ",") {
		ns, name, ok := strings.Cut(s, "/")
		if app := (types.NamespacedName{Namespace: ns, Name: name}); ok && app != owner {
			apps = append(apps, app)
		}
	}
	return apps
}

// owner is the Application of the object's ownership labels.
func (o *object) owner() types.NamespacedName { return o.app.Value() }

func (o *object) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

func (o *object) DeepCopyObject() runtime.Object {
	c := *o
	return &c
}

func (o *object) GetNamespace() string          { return o.namespace.Value() }
func (o *object) SetNamespace(namespace string) { o.namespace = unique.Make(namespace) }
func (o *object) GetName() string               { return o.name }
func (o *object) SetName(name string)           { o.name = name }
func (o *object) GetResourceVersion() string    { return o.resourceVersion }
func (o *object) SetResourceVersion(rv string)  { o.resourceVersion = rv }
func (o *object) GetGenerateName() string       { return "" }
func (o *object) SetGenerateName(string)        {}
func (o *object) GetUID() types.UID             { return "" }
func (o *object) SetUID(types.UID)              {}
func (o *object) GetGeneration() int64          { return 0 }
func (o *object) SetGeneration(int64)           {}
func (o *object) GetSelfLink() string           { return "" }
func (o *object) SetSelfLink(string)            {}
func (o *object) GetCreationTimestamp() metav1.Time {
	return metav1.Time{}
}
func (o *object) SetCreationTimestamp(metav1.Time)      {}
func (o *object) GetDeletionTimestamp() *metav1.Time    { return nil }
func (o *object) SetDeletionTimestamp(*metav1.Time)     {}
func (o *object) GetDeletionGracePeriodSeconds() *int64 { return nil }
func (o *object) SetDeletionGracePeriodSeconds(*int64)  {}

// GetLabels returns the ownership labels, when the object has them.
func (o *object) GetLabels() map[string]string {
	app := o.owner()
	if app.Name == "" && app.Namespace == "" {
		return nil
	}
	return map[string]string{v1beta1.LabelAppName: app.Name, v1beta1.LabelAppNamespace: app.Namespace}
}

// SetLabels keeps the ownership labels of labels.
func (o *object) SetLabels(labels map[string]string) {
	o.app = unique.Make(types.NamespacedName{Namespace: labels[v1beta1.LabelAppNamespace], Name: labels[v1beta1.LabelAppName]})
}

// GetAnnotations returns the shared-by annotation, when the object has it.
func (o *object) GetAnnotations() map[string]string {
	if o.sharers == (unique.Handle[string]{}) {
		return nil
	}
	return map[string]string{apply.AnnotationSharedBy: o.sharers.Value()}
}

// SetAnnotations keeps the shared-by annotation of annotations.
func (o *object) SetAnnotations(annotations map[string]string) {
	o.sharers = unique.Handle[string]{}
	if v := annotations[apply.AnnotationSharedBy]; v != "" {
		o.sharers = unique.Make(v)
	}
}

func (o *object) GetFinalizers() []string                       { return nil }
func (o *object) SetFinalizers([]string)                        {}
func (o *object) GetOwnerReferences() []metav1.OwnerReference   { return nil }
func (o *object) SetOwnerReferences([]metav1.OwnerReference)    {}
func (o *object) GetManagedFields() []metav1.ManagedFieldsEntry { return nil }
func (o *object) SetManagedFields([]metav1.ManagedFieldsEntry)  {}
