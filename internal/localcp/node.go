/*
Copyright 2026 The Steward Authors.

Licensed under the Apache License, Version 2.0.
*/

package localcp

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// applyNode registers the simulated node. kwok fills in its status
// (conditions, capacity, addresses) as a kubelet would; the labels are the
// ones a kubelet sets, so node selectors on them match.
func applyNode(ctx context.Context, c client.Client) error {
	node := &unstructured.Unstructured{}
	node.SetAPIVersion("v1")
	node.SetKind("Node")
	node.SetName(NodeName)
	node.SetAnnotations(map[string]string{
		kwokNodeAnnotation:             "fake",
		"node.alpha.kubernetes.io/ttl": "0",
	})
	node.SetLabels(map[string]string{
		"kubernetes.io/hostname": NodeName,
		"kubernetes.io/os":       "linux",
		"kubernetes.io/arch":     "amd64",
		"type":                   "kwok",
	})
	return apply(ctx, c, node)
}

// waitNodeSchedulable waits until the node is Ready and carries no taint
// that keeps Pods off it (kube-controller-manager taints a node not-ready
// until its first Ready heartbeat is seen).
func waitNodeSchedulable(ctx context.Context, c client.Client, timeout time.Duration) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		node := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKey{Name: NodeName}, node); err != nil {
			last = err.Error()
			return false, nil
		}
		last = nodeNotSchedulable(node)
		return last == "", nil
	})
	if err != nil {
		return fmt.Errorf("waiting for node %s to be Ready: %s: %w", NodeName, last, err)
	}
	return nil
}

// nodeNotSchedulable says why Pods cannot run on node yet, or "" when they can.
func nodeNotSchedulable(node *corev1.Node) string {
	ready := false
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			ready = cond.Status == corev1.ConditionTrue
		}
	}
	if !ready {
		return "not Ready"
	}
	for _, taint := range node.Spec.Taints {
		if taint.Effect == corev1.TaintEffectNoSchedule || taint.Effect == corev1.TaintEffectNoExecute {
			return "tainted " + taint.Key
		}
	}
	return ""
}
