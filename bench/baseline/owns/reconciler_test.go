package main

import (
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/steward-oam/steward/api/v1beta1"
)

func TestInterval_ReadsTheReconcileIntervalAnnotation(t *testing.T) {
	for v, want := range map[string]time.Duration{"30s": 30 * time.Second, "": 0, "soon": 0, "-1s": 0} {
		app := &v1beta1.Application{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{v1beta1.AnnotationReconcileInterval: v}}}
		if got := interval(app); got != want {
			t.Errorf("interval(%q) = %s, want %s", v, got, want)
		}
	}
}

func TestSetStatus_ReportsReadyLikeSteward(t *testing.T) {
	app := &v1beta1.Application{ObjectMeta: metav1.ObjectMeta{Generation: 3}}
	setStatus(app, 4, nil)
	if !v1beta1.IsConditionTrue(app.Status.Conditions, v1beta1.ConditionReady) ||
		app.Status.Phase != v1beta1.ApplicationRunning || app.Status.ObservedGeneration != 3 {
		t.Errorf("status after success = %+v", app.Status)
	}
	setStatus(app, 1, errors.New("boom"))
	if !v1beta1.IsConditionFalse(app.Status.Conditions, v1beta1.ConditionReady) || app.Status.Phase == v1beta1.ApplicationRunning {
		t.Errorf("status after failure = %+v", app.Status)
	}
}
