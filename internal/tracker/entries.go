package tracker

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/steward-oam/steward/api/v1beta1"
)

// Key identifies one object in one cluster. The API version is left out on
// purpose: the same object read through two versions of its group is one
// object.
type Key struct {
	Cluster   string
	Group     string
	Kind      string
	Namespace string
	Name      string
}

// String renders the key for messages: "Deployment default/web" with the
// cluster when it is not the local one.
func (k Key) String() string {
	s := k.Kind
	if k.Group != "" {
		s += "." + k.Group
	}
	s += " "
	if k.Namespace != "" {
		s += k.Namespace + "/"
	}
	s += k.Name
	if k.Cluster != "" {
		s += " (cluster " + k.Cluster + ")"
	}
	return s
}

// KeyOf returns the key of an entry. The hub is keyed "" however the
// entry spells it: Steward records "", KubeVela "local" for an object a
// topology policy placed on the hub, and the two entries are one object.
func KeyOf(mr v1beta1.ManagedResource) Key {
	gv, _ := schema.ParseGroupVersion(mr.APIVersion)
	return Key{Cluster: v1beta1.ClusterKey(mr.Cluster), Group: gv.Group, Kind: mr.Kind, Namespace: mr.Namespace, Name: mr.Name}
}

// Entry builds a tracker entry holding the full rendered manifest.
func Entry(cluster, component, trait string, obj *unstructured.Unstructured) (v1beta1.ManagedResource, error) {
	raw, err := json.Marshal(obj.Object)
	if err != nil {
		return v1beta1.ManagedResource{}, fmt.Errorf("encoding %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return v1beta1.ManagedResource{
		ClusterObjectReference: v1beta1.ClusterObjectReference{
			Cluster:    cluster,
			APIVersion: obj.GetAPIVersion(),
			Kind:       obj.GetKind(),
			Namespace:  obj.GetNamespace(),
			Name:       obj.GetName(),
		},
		OAMObjectReference: v1beta1.OAMObjectReference{Component: component, Trait: trait},
		Data:               &runtime.RawExtension{Raw: raw},
	}, nil
}

// Manifest decodes the rendered manifest of an entry; nil for
// metadata-only entries.
func Manifest(mr v1beta1.ManagedResource) (*unstructured.Unstructured, error) {
	if mr.Data == nil || len(mr.Data.Raw) == 0 {
		return nil, nil
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(mr.Data.Raw); err != nil {
		return nil, fmt.Errorf("decoding recorded %s: %w", KeyOf(mr), err)
	}
	return obj, nil
}

// Ref is an entry's object as a reference to read or delete it: its
// apiVersion, kind, namespace and name, nothing else.
func Ref(mr v1beta1.ManagedResource) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(mr.APIVersion)
	u.SetKind(mr.Kind)
	u.SetNamespace(mr.Namespace)
	u.SetName(mr.Name)
	return u
}

// Index maps keys to entries of one or more trackers.
type Index map[Key]v1beta1.ManagedResource

// IndexOf indexes entries.
func IndexOf(entries []v1beta1.ManagedResource) Index {
	idx := make(Index, len(entries))
	for _, e := range entries {
		idx[KeyOf(e)] = e
	}
	return idx
}
