package controller

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
)

// patchStatusRaw writes a JSON merge patch to the Application's status
// subresource, as a tool that does not use Steward's Go types would.
func patchStatusRaw(ns, name, status string) error {
	app := &v1beta1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	return testClient.Status().Patch(context.Background(), app, client.RawPatch(types.MergePatchType, []byte(`{"status": `+status+`}`)))
}

// Tools written for KubeVela write conditions in KubeVela's shape (no
// message, no observedGeneration) into an Application's status to have it
// looked at again: the API server accepts them, the write wakes Steward
// at once (the re-sync period here is far away), and Steward's next status
// replaces them with its own.
func TestConditions_KubeVelaShapedWriteIsAcceptedAndWakesSteward(t *testing.T) {
	ns := newNamespace(t)
	opts := testOptions()
	opts.ReSyncPeriod = 10 * time.Minute
	startManager(t, testCfg, opts)
	createApp(t, ns, "metadata: {name: web}\nspec:"+indent(v1Spec))
	waitReady(t, ns, "web")

	nudge := `{"conditions": [{"type": "Ready", "status": "False", "reason": "ReconcileError", "lastTransitionTime": "2026-01-02T03:04:05Z"}]}`
	if err := patchStatusRaw(ns, "web", nudge); err != nil {
		t.Fatalf("a status write in KubeVela's shape was refused: %v", err)
	}
	eventually(t, 15*time.Second, "Steward's own conditions back", func() error {
		app := getApp(t, ns, "web")
		ready := v1beta1.FindCondition(app.Status.Conditions, v1beta1.ConditionReady)
		if ready == nil || ready.Status != metav1.ConditionTrue || ready.Reason != v1beta1.ReasonSucceeded || ready.ObservedGeneration != app.Generation {
			return fmt.Errorf("ready %+v", ready)
		}
		return nil
	})
}
