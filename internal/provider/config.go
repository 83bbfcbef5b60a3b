package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
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
	template := p.Template
	if _, name, ok := strings.Cut(template, "/"); ok {
		template = name // "<template namespace>/<name>": configs carry the name only
	}
	var list corev1.SecretList
	if err := env.Client.List(ctx, &list, client.InNamespace(p.Namespace),
		client.MatchingLabels{ConfigLabelCatalog: ConfigCatalogValue, ConfigLabelType: template}); err != nil {
		return nil, fmt.Errorf("%s: listing configs in %s: %w", action, p.Namespace, err)
	}
	configs := []map[string]any{}
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
			env.Log.V(1).Info("skipping a config whose properties are not JSON", "step", env.Step, "config", sec.Namespace+"/"+sec.Name, "error", err.Error())
			continue
		case ok && props != nil:
			entry["config"] = props
		}
		configs = append(configs, entry)
	}
	return json.Marshal(map[string]any{"configs": configs})
}

// configDelete deletes a config Secret and the objects its template
// made (listed under objects-reference), as KubeVela does. A Secret that
// is not a config is left alone.
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
	if refs, ok := sec.Data[ConfigDataObjectReferences]; ok {
		var objs []corev1.ObjectReference
		if err := json.Unmarshal(refs, &objs); err != nil {
			return nil, fmt.Errorf("%s: config %s/%s: %s is not a list of object references: %w", action, p.Namespace, p.Name, ConfigDataObjectReferences, err)
		}
		for _, ref := range objs {
			u := &unstructured.Unstructured{}
			u.SetAPIVersion(ref.APIVersion)
			u.SetKind(ref.Kind)
			u.SetNamespace(ref.Namespace)
			u.SetName(ref.Name)
			if err := env.Client.Delete(ctx, u); err != nil && !apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("%s: deleting %s %s/%s made by config %s/%s: %w", action, ref.Kind, ref.Namespace, ref.Name, p.Namespace, p.Name, err)
			}
		}
	}
	if err := env.Client.Delete(ctx, sec, client.Preconditions{UID: &sec.UID}); err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("%s: deleting config %s/%s: %w", action, p.Namespace, p.Name, err)
	}
	return nil, nil
}
