/*
Copyright 2026 The Steward Authors.

Licensed under the Apache License, Version 2.0.
*/

package localcp

import (
	"context"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// installCRDs server-side applies the CRDs in dir and waits until the API
// server serves each of them (Established), so definitions of those kinds
// can be applied next. It returns the number of CRDs.
func installCRDs(ctx context.Context, c client.Client, dir string) (int, error) {
	objs, err := readObjects(dir)
	if err != nil {
		return 0, err
	}
	if len(objs) == 0 {
		return 0, fmt.Errorf("no CRDs in %s", dir)
	}
	for _, obj := range objs {
		if obj.GetKind() != "CustomResourceDefinition" {
			return 0, fmt.Errorf("%s in %s is a %s, not a CustomResourceDefinition", obj.GetName(), dir, obj.GetKind())
		}
		if err := apply(ctx, c, obj); err != nil {
			return 0, err
		}
	}
	for _, obj := range objs {
		if err := waitEstablished(ctx, c, obj.GetName()); err != nil {
			return 0, err
		}
	}
	return len(objs), nil
}

func waitEstablished(ctx context.Context, c client.Client, name string) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			last = err.Error()
			return false, nil
		}
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		last = "not Established yet"
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for CRD %s to be served: %s: %w", name, last, err)
	}
	return nil
}

// newScheme knows the kinds the plane reads typed: client-go's and CRDs.
func newScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
}
