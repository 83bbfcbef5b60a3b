/*
Copyright 2026 The Steward Authors.

Licensed under the Apache License, Version 2.0.
*/

package localcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultDefinitionNamespace is where KubeVela keeps the definitions every
// Application may use.
const DefaultDefinitionNamespace = "vela-system"

// ApplyDefinitions creates, or updates when they exist, the objects in the
// .yaml, .yml and .json files directly in dir (multi-document YAML is fine),
// typically ComponentDefinitions, TraitDefinitions and PolicyDefinitions.
// Namespaced objects that name no namespace go to namespace, which is
// created first, as is any other namespace the objects name. A missing
// dir applies nothing. Every file is parsed before anything is applied, so a
// typo changes nothing. It returns the number of objects applied.
//
// Tests use it to install the same definitions as `steward up`.
func ApplyDefinitions(ctx context.Context, c client.Client, dir, namespace string) (int, error) {
	objs, err := readObjects(dir)
	if err != nil {
		return 0, err
	}
	namespaces := []string{namespace}
	for _, obj := range objs {
		namespaced, err := c.IsObjectNamespaced(obj)
		if err != nil {
			return 0, fmt.Errorf("finding scope of %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		if !namespaced {
			continue
		}
		if obj.GetNamespace() == "" {
			obj.SetNamespace(namespace)
		}
		if !slices.Contains(namespaces, obj.GetNamespace()) {
			namespaces = append(namespaces, obj.GetNamespace())
		}
	}
	for _, ns := range namespaces {
		err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return 0, fmt.Errorf("creating namespace %s: %w", ns, err)
		}
	}
	for i, obj := range objs {
		if err := createOrUpdate(ctx, c, obj); err != nil {
			return i, err
		}
	}
	return len(objs), nil
}

func createOrUpdate(ctx context.Context, c client.Client, obj *unstructured.Unstructured) error {
	err := c.Create(ctx, obj.DeepCopy())
	if err == nil {
		return nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating %s %s: %w", obj.GetKind(), client.ObjectKeyFromObject(obj), err)
	}
	existing := &unstructured.Unstructured{}
	existing.SetGroupVersionKind(obj.GroupVersionKind())
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), existing); err != nil {
		return fmt.Errorf("getting %s %s: %w", obj.GetKind(), client.ObjectKeyFromObject(obj), err)
	}
	update := obj.DeepCopy()
	update.SetResourceVersion(existing.GetResourceVersion())
	if err := c.Update(ctx, update); err != nil {
		return fmt.Errorf("updating %s %s: %w", obj.GetKind(), client.ObjectKeyFromObject(obj), err)
	}
	return nil
}

// readObjects decodes every object of the manifest files in dir, in file
// name order.
func readObjects(dir string) ([]*unstructured.Unstructured, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading definitions dir: %w", err)
	}
	var objs []*unstructured.Unstructured
	for _, e := range entries {
		ext := strings.ToLower(filepath.Ext(e.Name()))
		if e.IsDir() || (ext != ".yaml" && ext != ".yml" && ext != ".json") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		fileObjs, err := decodeFile(path)
		if err != nil {
			return nil, fmt.Errorf("reading definitions from %s: %w", path, err)
		}
		objs = append(objs, fileObjs...)
	}
	return objs, nil
}

func decodeFile(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for {
		var content map[string]any
		err := dec.Decode(&content)
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(content) == 0 {
			continue // an empty document, e.g. after a trailing ---
		}
		obj := &unstructured.Unstructured{Object: content}
		if obj.GetAPIVersion() == "" || obj.GetKind() == "" || obj.GetName() == "" {
			return nil, fmt.Errorf("object %d has no apiVersion, kind or metadata.name", len(objs)+1)
		}
		objs = append(objs, obj)
	}
}
