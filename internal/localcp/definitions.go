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

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultDefinitionNamespace is where KubeVela keeps the definitions every
// Application may use.
const DefaultDefinitionNamespace = "vela-system"

// FieldOwner is the server-side apply field manager of everything the plane
// installs (CRDs, definitions, their namespaces, the node), so re-applying
// takes back fields only from itself and `kubectl get --show-managed-fields`
// says who wrote them.
const FieldOwner = "steward-dev"

// ApplyDefinitions server-side applies the objects in the .yaml, .yml and
// .json files directly in dir (multi-document YAML is fine), typically
// ComponentDefinitions, TraitDefinitions and PolicyDefinitions, as
// FieldOwner, forcing ownership of the fields it sets. Namespaced objects
// that name no namespace go to namespace, which is applied first, as is any
// other namespace the objects name. A missing dir applies nothing. Every file
// is parsed before anything is applied, so a typo changes nothing. It returns
// the number of objects applied.
//
// Tests use it to install the same definitions as `steward dev`.
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
		if err := apply(ctx, c, namespaceObject(ns)); err != nil {
			return 0, err
		}
	}
	for i, obj := range objs {
		if err := apply(ctx, c, obj); err != nil {
			return i, err
		}
	}
	return len(objs), nil
}

// apply server-side applies obj as FieldOwner.
func apply(ctx context.Context, c client.Client, obj *unstructured.Unstructured) error {
	err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj.DeepCopy()), client.FieldOwner(FieldOwner), client.ForceOwnership)
	if err != nil {
		return fmt.Errorf("applying %s %s: %w", obj.GetKind(), client.ObjectKeyFromObject(obj), err)
	}
	return nil
}

func namespaceObject(name string) *unstructured.Unstructured {
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(name)
	return ns
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
