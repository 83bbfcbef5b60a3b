package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/bench/measure"
	"github.com/steward-oam/steward/bench/record"
)

// unrelatedNamespace holds Deployments no Application owns, like the
// rest of a shared cluster.
const unrelatedNamespace = "unrelated"

// memory measures heap in use and RSS with the apps delivered and
// re-syncing, then with more and more unrelated Deployments in another
// namespace.
func (r *runner) memory(ctx context.Context, s *session) error {
	cfg := r.opts.Profile.Memory
	shape := ShapeOf(cfg.ResourcesPer)
	// The apps re-sync while memory is sampled: memory that grows with
	// passes shows here as well as memory that grows with the cluster.
	ann := map[string]string{v1beta1.AnnotationReconcileInterval: cfg.Interval.D().String()}
	if err := CreateApplications(ctx, s.cp.Client, benchNamespace, cfg.Apps, shape, ann); err != nil {
		return err
	}
	if err := s.start(ctx); err != nil {
		return err
	}
	if _, err := WaitReady(ctx, s.cp.Client, benchNamespace, cfg.Apps, 5*time.Minute); err != nil {
		return err
	}
	if err := sleep(ctx, cfg.WarmUp.D()); err != nil {
		return err
	}
	res := record.MemoryResult{Controller: s.controller.Name, Apps: cfg.Apps, Resources: cfg.Apps * shape.Resources()}
	created := 0
	for _, level := range cfg.Unrelated {
		err := createUnrelated(ctx, s, created, level)
		if err != nil {
			return err
		}
		created = max(created, level)
		if level > 0 && res.UnrelatedBytes == 0 {
			if res.UnrelatedBytes, err = storedSize(ctx, s); err != nil {
				return err
			}
		}
		if err := sleep(ctx, cfg.Settle.D()); err != nil {
			return err
		}
		p, err := measure.SampleMemory(ctx, s.proc, cfg)
		if err != nil {
			return err
		}
		p.Unrelated = level
		res.Points = append(res.Points, p)
		s.progress("%d unrelated Deployments: heap in use %.1f MiB after GC (median %.1f MiB, %.0f GCs in %d samples), RSS %.1f MiB",
			level, p.HeapInuse/mib, p.HeapInuseMedian/mib, p.GCs, p.SampleCount, p.RSS/mib)
	}
	r.res.Memory = append(r.res.Memory, res)
	return nil
}

// createUnrelated creates unrelated Deployments from index from up to to.
func createUnrelated(ctx context.Context, s *session, from, to int) error {
	if to <= from {
		return nil
	}
	if err := EnsureNamespace(ctx, s.cp.Client, unrelatedNamespace); err != nil {
		return err
	}
	start := time.Now()
	err := parallel(ctx, to-from, 32, func(i int) error {
		d := UnrelatedDeployment(unrelatedNamespace, fmt.Sprintf("unrelated-%05d", from+i))
		if err := s.cp.Client.Create(ctx, d); err != nil {
			return fmt.Errorf("creating unrelated deployment %s: %w", d.Name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.progress("created %d unrelated Deployments in %s", to-from, time.Since(start).Round(time.Millisecond))
	return nil
}

// storedSize is the JSON size of an unrelated Deployment as the apiserver
// returns it, defaults and managedFields included.
func storedSize(ctx context.Context, s *session) (int, error) {
	d := &appsv1.Deployment{}
	if err := s.cp.Client.Get(ctx, client.ObjectKey{Namespace: unrelatedNamespace, Name: "unrelated-00000"}, d); err != nil {
		return 0, fmt.Errorf("reading an unrelated deployment: %w", err)
	}
	return jsonSize(d), nil
}

// UnrelatedDeployment is a Deployment of realistic size (about 2 KB of
// JSON as sent, more once the apiserver adds defaults and managedFields:
// ten env vars, probes, resources, labels and annotations) that no
// Application owns.
func UnrelatedDeployment(namespace, name string) *appsv1.Deployment {
	labels := map[string]string{"app.kubernetes.io/name": name, "app.kubernetes.io/part-of": "unrelated-system", "team": "payments"}
	replicas := int32(2)
	env := make([]corev1.EnvVar, 0, 10)
	for i := range 10 {
		env = append(env, corev1.EnvVar{Name: fmt.Sprintf("SETTING_%02d", i), Value: fmt.Sprintf("https://config.payments.example.com/%s/settings/%02d?region=eu-west-1", name, i)})
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels,
			Annotations: map[string]string{"owner": "team-payments@example.com", "description": "A workload that shares the cluster with the benchmarked Applications and is not theirs."}},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name:  "main",
					Image: "registry.example.com/payments/" + name + ":2.4.1",
					Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
					Env:   env,
					Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
						Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("512Mi")},
					},
					ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(8080)}}},
					LivenessProbe:  &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/live", Port: intstr.FromInt32(8080)}}},
				}}},
			},
		},
	}
}

// UnrelatedSentBytes is the JSON size of an unrelated Deployment as the
// memory scenario sends it, before the apiserver adds defaults and
// managedFields (MemoryResult.UnrelatedBytes is its size as stored).
func UnrelatedSentBytes() int {
	return jsonSize(UnrelatedDeployment(unrelatedNamespace, "unrelated-00000"))
}

// jsonSize is the length of v's JSON encoding.
func jsonSize(v any) int {
	data, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(data)
}
