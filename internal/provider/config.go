package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
)

// KubeVela stores a config as a Secret with these labels, annotations
// and data keys (pkg/config in KubeVela and its workflow engine).
const (
	ConfigLabelCatalog         = "config.oam.dev/catalog"
	ConfigLabelType            = "config.oam.dev/type"
	ConfigCatalogValue         = "velacore-config"
	ConfigAnnotationSensitive  = "config.oam.dev/sensitive"
	ConfigAnnotationAlias      = "config.oam.dev/alias"
	ConfigAnnotationDesc       = "config.oam.dev/description"
	ConfigDataProperties       = "input-properties"
	ConfigDataObjectReferences = "objects-reference"
)

// Config returns the `vela/config` actions: "config.create",
// "config.read", "config.list" and "config.delete". They reach Secrets
// through env.Client, as the Application acts.
func Config() Registry {
	return Registry{
		"config.create": configCreate,
		"config.read":   configRead,
		"config.list":   configList,
		"config.delete": configDelete,
	}
}

type configRef struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

func (r configRef) check(action string) error {
	if r.Name == "" || r.Namespace == "" {
		return fmt.Errorf("%s: name and namespace are required", action)
	}
	return nil
}

func decodeParams(action string, raw json.RawMessage, v any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("%s: invalid $params: %w", action, err)
	}
	return nil
}

func needClient(action string, env *Env) error {
	if env.Client == nil {
		return fmt.Errorf("%s: no client to reach the cluster with", action)
	}
	return nil
}

// configCreate creates or updates a config without a template, as
// KubeVela stores one: a Secret labelled config.oam.dev/catalog:
// velacore-config and config.oam.dev/type: "", its properties as JSON
// under input-properties. A Secret of that name that is not a config, or
// a config made from a template, is left alone and the action fails.
func configCreate(ctx context.Context, env *Env, raw json.RawMessage) (json.RawMessage, error) {
	const action = "config.create"
	var p struct {
		configRef
		Template string         `json:"template"`
		Config   map[string]any `json:"config"`
	}
	if err := decodeParams(action, raw, &p); err != nil {
		return nil, err
	}
	if err := p.check(action); err != nil {
		return nil, err
	}
	if err := needClient(action, env); err != nil {
		return nil, err
	}
	if err := env.Boundary.CheckNamespace(fmt.Sprintf("config Secret %s/%s", p.Namespace, p.Name), p.Namespace); err != nil {
		return nil, Refused(fmt.Errorf("%s: %w", action, err))
	}
	if p.Template != "" {
		return nil, fmt.Errorf("%s: config %s/%s names the config template %q: Steward does not render KubeVela's config templates; create the config without a template", action, p.Namespace, p.Name, p.Template)
	}
	if p.Config == nil {
		p.Config = map[string]any{}
	}
	props, err := json.Marshal(p.Config)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", action, err)
	}
	sec := &corev1.Secret{}
	err = env.Client.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: p.Name}, sec)
	switch {
	case apierrors.IsNotFound(err):
		sec = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Name:        p.Name,
				Namespace:   p.Namespace,
				Labels:      map[string]string{ConfigLabelCatalog: ConfigCatalogValue, ConfigLabelType: ""},
				Annotations: map[string]string{ConfigAnnotationAlias: "", ConfigAnnotationDesc: ""},
			},
			Data: map[string][]byte{ConfigDataProperties: props},
		}
		if err := env.Client.Create(ctx, sec); err != nil {
			return nil, fmt.Errorf("%s: creating Secret %s/%s: %w", action, p.Namespace, p.Name, err)
		}
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("%s: reading Secret %s/%s: %w", action, p.Namespace, p.Name, err)
	}
	if sec.Labels[ConfigLabelCatalog] != ConfigCatalogValue {
		return nil, fmt.Errorf("%s: Secret %s/%s exists and is not a config (no label %s=%s); it is left alone", action, p.Namespace, p.Name, ConfigLabelCatalog, ConfigCatalogValue)
	}
	if by := managedSecret(env, sec); by != "" {
		return nil, Refuse("%s: config %s/%s is managed by %s: a step does not overwrite it", action, p.Namespace, p.Name, by)
	}
	if t := sec.Labels[ConfigLabelType]; t != "" {
		return nil, fmt.Errorf("%s: config %s/%s was made from the template %q: the template of a config cannot be changed", action, p.Namespace, p.Name, t)
	}
	if sec.Data == nil {
		sec.Data = map[string][]byte{}
	}
	sec.Data[ConfigDataProperties] = props
	if err := env.Client.Update(ctx, sec); err != nil {
		return nil, fmt.Errorf("%s: updating Secret %s/%s: %w", action, p.Namespace, p.Name, err)
	}
	return nil, nil
}

// configProperties decodes a config Secret's properties; ok is false for
// a sensitive config, whose properties are never handed out.
func configProperties(sec *corev1.Secret) (props map[string]any, ok bool, err error) {
	if sec.Annotations[ConfigAnnotationSensitive] == "true" {
		return nil, false, nil
	}
	raw, has := sec.Data[ConfigDataProperties]
	if !has {
		return nil, true, fmt.Errorf("config %s/%s has no %s", sec.Namespace, sec.Name, ConfigDataProperties)
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&props); err != nil {
		return nil, true, fmt.Errorf("config %s/%s: %s is not a JSON object: %w", sec.Namespace, sec.Name, ConfigDataProperties, err)
	}
	return props, true, nil
}

func configRead(ctx context.Context, env *Env, raw json.RawMessage) (json.RawMessage, error) {
	const action = "config.read"
	var p configRef
	if err := decodeParams(action, raw, &p); err != nil {
		return nil, err
	}
	if err := p.check(action); err != nil {
		return nil, err
	}
	if err := needClient(action, env); err != nil {
		return nil, err
	}
	if err := env.Boundary.CheckNamespace(fmt.Sprintf("config Secret %s/%s", p.Namespace, p.Name), p.Namespace); err != nil {
		return nil, Refused(fmt.Errorf("%s: %w", action, err))
	}
	sec := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: p.Name}, sec); err != nil {
		return nil, fmt.Errorf("%s: reading config %s/%s: %w", action, p.Namespace, p.Name, err)
	}
	props, ok, err := configProperties(sec)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", action, err)
	}
	if !ok {
		return nil, fmt.Errorf("%s: config %s/%s is sensitive and cannot be read", action, p.Namespace, p.Name)
	}
	if props == nil {
		props = map[string]any{}
	}
	return json.Marshal(map[string]any{"config": props})
}

func configList(ctx context.Context, env *Env, raw json.RawMessage) (json.RawMessage, error) {
	const action = "config.list"
	var p struct {
		Template  string `json:"template"`
		Namespace string `json:"namespace"`
	}
	if err := decodeParams(action, raw, &p); err != nil {
		return nil, err
	}
	if p.Template == "" || p.Namespace == "" {
		return nil, fmt.Errorf("%s: template and namespace are required", action)
	}
	if err := needClient(action, env); err != nil {
		return nil, err
	}
	if err := env.Boundary.CheckNamespace("the configs of namespace "+p.Namespace, p.Namespace); err != nil {
		return nil, Refused(fmt.Errorf("%s: %w", action, err))
	}
	template := p.Template
	if _, name, ok := strings.Cut(template, "/"); ok {
		template = name // "<template namespace>/<name>": configs carry the name only
	}
	configs := []map[string]any{}
	budget := resultBudget{what: fmt.Sprintf("the configs of template %q in %s", p.Template, p.Namespace), limit: env.maxResult()}
	err := listPages(ctx, env.Client, func() client.ObjectList { return &corev1.SecretList{} }, func(l client.ObjectList) error {
		list := l.(*corev1.SecretList)
		for i := range list.Items {
			sec := &list.Items[i]
			entry := map[string]any{
				"name":        sec.Name,
				"alias":       sec.Annotations[ConfigAnnotationAlias],
				"description": sec.Annotations[ConfigAnnotationDesc],
			}
			props, ok, err := configProperties(sec)
			switch {
			case err != nil && sec.Data[ConfigDataProperties] != nil:
				env.Log.V(1).Info("Skipped a config whose properties are not JSON", "step", env.Step, "config", sec.Namespace+"/"+sec.Name, "error", err.Error())
				continue
			case ok && props != nil:
				entry["config"] = props
			}
			if err := budget.add(entry); err != nil {
				return err
			}
			configs = append(configs, entry)
		}
		return nil
	}, client.InNamespace(p.Namespace), client.MatchingLabels{ConfigLabelCatalog: ConfigCatalogValue, ConfigLabelType: template})
	if err != nil {
		var tl *TooLargeError
		if errors.As(err, &tl) {
			return nil, err
		}
		return nil, fmt.Errorf("%s: listing configs in %s: %w", action, p.Namespace, err)
	}
	return json.Marshal(map[string]any{"configs": configs})
}

// configDelete deletes a config Secret and the objects its template made
// (listed under objects-reference), as KubeVela does, with three rules
// KubeVela does not have, each checked for every listed object before
// anything is deleted (a refusal fails the step and deletes nothing):
//
//   - the boundary: every listed object, and the config, within what the
//     Application may reach (--no-cross-namespace-objects), checked
//     before any of them is read;
//   - made for this config: a listed object is deleted only when it names
//     the config Secret as its owner (an ownerReference with the Secret's
//     UID), as objects a config template renders do; anything else the
//     list names (another namespace's object, a Namespace, a CRD) is not
//     the config's to delete;
//   - never a managed object: neither the config nor a listed object may
//     be one an Application manages (this one's components, or another's).
//
// A listed object that is already gone is skipped. A Secret that is not a
// config is left alone.
func configDelete(ctx context.Context, env *Env, raw json.RawMessage) (json.RawMessage, error) {
	const action = "config.delete"
	var p configRef
	if err := decodeParams(action, raw, &p); err != nil {
		return nil, err
	}
	if err := p.check(action); err != nil {
		return nil, err
	}
	if err := needClient(action, env); err != nil {
		return nil, err
	}
	cfgDesc := fmt.Sprintf("config Secret %s/%s", p.Namespace, p.Name)
	if err := env.Boundary.CheckNamespace(cfgDesc, p.Namespace); err != nil {
		return nil, Refused(fmt.Errorf("%s: %w", action, err))
	}
	sec := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: p.Name}, sec); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("%s: the config %s/%s is not found", action, p.Namespace, p.Name)
		}
		return nil, fmt.Errorf("%s: reading config %s/%s: %w", action, p.Namespace, p.Name, err)
	}
	if sec.Labels[ConfigLabelCatalog] != ConfigCatalogValue {
		return nil, fmt.Errorf("%s: Secret %s/%s is not a config (no label %s=%s); it is left alone", action, p.Namespace, p.Name, ConfigLabelCatalog, ConfigCatalogValue)
	}
	refs, err := configReferences(env, sec)
	if err != nil {
		return nil, wrapRefusal(fmt.Errorf("%s: config %s/%s: %w", action, p.Namespace, p.Name, err))
	}
	if by := managedSecret(env, sec); by != "" {
		return nil, Refuse("%s: config %s/%s is managed by %s: a step does not delete it (remove it from the Application instead)", action, p.Namespace, p.Name, by)
	}
	made, err := madeFor(ctx, env, sec, refs)
	if err != nil {
		return nil, wrapRefusal(fmt.Errorf("%s: config %s/%s: %w", action, p.Namespace, p.Name, err))
	}
	for _, u := range made {
		desc := Describe(u)
		err := env.Client.Delete(ctx, u, client.Preconditions{UID: uidOf(u)}, client.PropagationPolicy(metav1.DeletePropagationBackground))
		if apierrors.IsNotFound(err) {
			err = nil
		}
		env.Log.V(1).Info("Deleted by a workflow step's config.delete: made for the config", "step", env.Step, "object", desc, "config", p.Namespace+"/"+p.Name, "error", errString(err))
		if err != nil {
			return nil, fmt.Errorf("%s: deleting %s made by config %s/%s: %w", action, desc, p.Namespace, p.Name, err)
		}
	}
	err = env.Client.Delete(ctx, sec, client.Preconditions{UID: &sec.UID})
	if apierrors.IsNotFound(err) {
		err = nil
	}
	env.Log.V(1).Info("Deleted by a workflow step's config.delete", "step", env.Step, "config", p.Namespace+"/"+p.Name, "error", errString(err))
	if err != nil {
		return nil, fmt.Errorf("%s: deleting config %s/%s: %w", action, p.Namespace, p.Name, err)
	}
	return nil, nil
}

// maxObjectReferences bounds the objects one config may list.
const maxObjectReferences = 64

// configReferences reads a config's objects-reference and holds every
// object it lists to the boundary, before any of them is read.
func configReferences(env *Env, sec *corev1.Secret) ([]*unstructured.Unstructured, error) {
	raw, ok := sec.Data[ConfigDataObjectReferences]
	if !ok {
		return nil, nil
	}
	var refs []corev1.ObjectReference
	if err := json.Unmarshal(raw, &refs); err != nil {
		return nil, fmt.Errorf("%s is not a list of object references: %w", ConfigDataObjectReferences, err)
	}
	if len(refs) > maxObjectReferences {
		return nil, fmt.Errorf("%s lists %d objects, more than the %d a config may", ConfigDataObjectReferences, len(refs), maxObjectReferences)
	}
	out := make([]*unstructured.Unstructured, 0, len(refs))
	for _, ref := range refs {
		if ref.APIVersion == "" || ref.Kind == "" || ref.Name == "" {
			return nil, fmt.Errorf("%s: every reference needs apiVersion, kind and name", ConfigDataObjectReferences)
		}
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(ref.APIVersion)
		u.SetKind(ref.Kind)
		u.SetName(ref.Name)
		namespaced, err := env.Client.IsObjectNamespaced(u)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", ConfigDataObjectReferences, ref.Kind, err)
		}
		if namespaced {
			ns := ref.Namespace
			if ns == "" {
				ns = sec.Namespace
			}
			u.SetNamespace(ns)
		}
		if err := env.Boundary.CheckObject(Describe(u), namespaced, u.GetNamespace()); err != nil {
			return nil, Refused(fmt.Errorf("%s lists %w", ConfigDataObjectReferences, err))
		}
		out = append(out, u)
	}
	return out, nil
}

// madeFor returns the listed objects that exist, once every one of them
// was found made for the config and managed by no Application; the first
// that is not is refused instead, and nothing is deleted.
func madeFor(ctx context.Context, env *Env, sec *corev1.Secret, refs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	var live []*unstructured.Unstructured
	for _, u := range refs {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(u.GroupVersionKind())
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
			if apierrors.IsNotFound(err) {
				env.Log.V(1).Info("Skipped by a workflow step's config.delete: already gone", "step", env.Step, "object", Describe(u))
				continue
			}
			return nil, fmt.Errorf("reading %s it lists: %w", Describe(u), err)
		}
		if by := managedObject(env, got); by != "" {
			return nil, Refuse("%s lists %s, which %s manages: a step does not delete it", ConfigDataObjectReferences, Describe(u), by)
		}
		if !ownedBy(got, sec.UID) {
			return nil, Refuse("%s lists %s, which was not made for this config (it has no ownerReference to Secret %s/%s): a step deletes only what a config made; delete it yourself, or remove it from the list",
				ConfigDataObjectReferences, Describe(u), sec.Namespace, sec.Name)
		}
		live = append(live, got)
	}
	return live, nil
}

// wrapRefusal keeps a refusal a refusal when a message is put around it.
func wrapRefusal(err error) error {
	var r *RefusedError
	if errors.As(err, &r) {
		return &RefusedError{Err: err}
	}
	return err
}

// ownedBy reports whether obj names uid among its owners.
func ownedBy(obj *unstructured.Unstructured, uid types.UID) bool {
	for _, o := range obj.GetOwnerReferences() {
		if o.UID == uid && uid != "" {
			return true
		}
	}
	return false
}

// managedSecret names what manages a config Secret, "" when nothing does.
func managedSecret(env *Env, sec *corev1.Secret) string {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("Secret")
	u.SetNamespace(sec.Namespace)
	u.SetName(sec.Name)
	u.SetLabels(sec.Labels)
	return managedObject(env, u)
}

// managedObject names what manages obj: Env.Managed's answer, else the
// Application its ownership labels name; "" when nothing does.
func managedObject(env *Env, obj *unstructured.Unstructured) string {
	if by := env.managedBy(obj); by != "" {
		return by
	}
	l := obj.GetLabels()
	if name := l[v1beta1.LabelAppName]; name != "" {
		if name == env.App && l[v1beta1.LabelAppNamespace] == env.Namespace {
			return "this Application"
		}
		return fmt.Sprintf("Application %s/%s", l[v1beta1.LabelAppNamespace], name)
	}
	return ""
}

// Describe names an object for messages: "ConfigMap team-b/victim",
// "Namespace prod".
func Describe(u *unstructured.Unstructured) string {
	if u.GetNamespace() == "" {
		return u.GetKind() + " " + u.GetName()
	}
	return u.GetKind() + " " + u.GetNamespace() + "/" + u.GetName()
}

func uidOf(u *unstructured.Unstructured) *types.UID {
	uid := u.GetUID()
	return &uid
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
