package release

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/boundary"
	"github.com/steward-oam/steward/internal/controller/controllertest"
	"github.com/steward-oam/steward/internal/cueeval"
	"github.com/steward-oam/steward/internal/helm/chart/charttest"
	"github.com/steward-oam/steward/internal/helm/fetch"
)

// What cannot be prepared is permanent when trying again changes nothing
// until the Application or what it names changes: a chart or version the
// repository does not have, a required valuesFrom source that is
// missing, values that are not YAML, a source or Secret in a namespace
// it may not be in, parameters that do not parse. A repository out of
// reach and a read the API server refuses (RBAC can change) are
// transient.
func TestPrepare_PermanentAndTransientFailures(t *testing.T) {
	ctx := context.Background()
	admin := controllertest.Client(t)
	ns := controllertest.NewNamespace(t)
	other := controllertest.NewNamespace(t)
	repo := charttest.NewRepo()
	defer repo.Close()
	repo.Add(charttest.ConfigMapChart("demo", "1.0.0"))
	gone := charttest.NewRepo()
	goneURL := gone.URL()
	gone.Close()
	for _, obj := range []client.Object{
		&corev1.ConfigMap{ObjectMeta: objectMeta(ns, "good"), Data: map[string]string{"values.yaml": "greeting: hi\n"}},
		&corev1.ConfigMap{ObjectMeta: objectMeta(ns, "bad"), Data: map[string]string{"values.yaml": "greeting: [unclosed\n"}},
		&corev1.ConfigMap{ObjectMeta: objectMeta(other, "theirs"), Data: map[string]string{"values.yaml": "greeting: hi\n"}},
	} {
		if err := admin.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	controllertest.Tenant(t, admin, ns, "no-reads")
	as := rest.CopyConfig(controllertest.Config(t))
	as.Impersonate.UserName = "system:serviceaccount:" + ns + ":no-reads"
	noReads, err := client.New(as, client.Options{Scheme: controllertest.Scheme()})
	if err != nil {
		t.Fatal(err)
	}

	chart := map[string]any{"source": "demo", "repoURL": repo.URL(), "version": "1.0.0"}
	vf := func(name string, optional bool, namespace string) []any {
		return []any{map[string]any{"kind": "ConfigMap", "name": name, "optional": optional, "namespace": namespace}}
	}
	p := &Provider{Fetcher: fetch.New(fetch.Options{}), Wait: -1}
	for name, tc := range map[string]struct {
		params    map[string]any
		reader    client.Reader
		b         boundary.Boundary
		reason    string // "" when it prepares
		permanent bool
	}{
		"values from a ConfigMap":               {params: map[string]any{"chart": chart, "valuesFrom": vf("good", false, "")}},
		"an optional values source missing":     {params: map[string]any{"chart": chart, "valuesFrom": vf("nope", true, "")}},
		"a required values source missing":      {params: map[string]any{"chart": chart, "valuesFrom": vf("nope", false, "")}, reason: ReasonValuesFailed, permanent: true},
		"values that are not YAML":              {params: map[string]any{"chart": chart, "valuesFrom": vf("bad", false, "")}, reason: ReasonValuesFailed, permanent: true},
		"values of another namespace":           {params: map[string]any{"chart": chart, "valuesFrom": vf("theirs", false, other)}, reason: ReasonValuesFailed, permanent: true},
		"values of another namespace, confined": {params: map[string]any{"chart": chart, "valuesFrom": vf("theirs", false, other)}, b: boundary.Boundary{Confined: true}, reason: "CrossNamespaceObject", permanent: true},
		"credentials' Secret missing":           {params: map[string]any{"chart": map[string]any{"source": "demo", "repoURL": repo.URL(), "auth": map[string]any{"secretRef": map[string]any{"name": "nope"}}}}, reason: ReasonValuesFailed, permanent: true},
		"options that do not parse":             {params: map[string]any{"chart": chart, "options": map[string]any{"timeout": "soon"}}, reason: ReasonValuesFailed, permanent: true},
		"no chart source":                       {params: map[string]any{"chart": map[string]any{}}, reason: ReasonValuesFailed, permanent: true},
		"a version the repository lacks":        {params: map[string]any{"chart": map[string]any{"source": "demo", "repoURL": repo.URL(), "version": "9.9.9"}}, reason: ReasonFetchFailed, permanent: true},
		"a chart the repository lacks":          {params: map[string]any{"chart": map[string]any{"source": "nope", "repoURL": repo.URL()}}, reason: ReasonFetchFailed, permanent: true},
		"a repository out of reach":             {params: map[string]any{"chart": map[string]any{"source": "demo", "repoURL": goneURL}}, reason: ReasonFetchFailed},
		"values the identity may not read":      {params: map[string]any{"chart": chart, "valuesFrom": vf("good", false, "")}, reader: noReads, reason: ReasonValuesFailed},
	} {
		raw, _ := json.Marshal(tc.params)
		r := tc.reader
		if r == nil {
			r = admin
		}
		b := tc.b
		b.Namespace = ns
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, err := p.Prepare(ctx, r, b, raw, "v1.30.0")
		cancel()
		if tc.reason == "" {
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%s: %v, want a *release.Error", name, err)
			continue
		}
		if e.Reason != tc.reason || Permanent(err) != tc.permanent {
			t.Errorf("%s: reason %s, permanent %v; want %s, %v (%v)", name, e.Reason, Permanent(err), tc.reason, tc.permanent, err)
		}
	}
}

// KubeVela's workflow back-off for a failed step: 2^n × 50 ms, between
// 1 s and 5 min; its ten retries take about a minute.
func TestRetryAfter_IsKubeVelasWorkflowBackoff(t *testing.T) {
	for n, want := range map[int]time.Duration{
		0: time.Second, 1: time.Second, 4: time.Second, 5: 1600 * time.Millisecond,
		9: 25600 * time.Millisecond, 13: 5 * time.Minute, 30: 5 * time.Minute,
	} {
		if got := RetryAfter(n); got != want {
			t.Errorf("RetryAfter(%d) = %s, want %s", n, got, want)
		}
	}
	var total time.Duration
	for n := 1; n <= MaxRetries; n++ {
		total += RetryAfter(n)
	}
	if total < 50*time.Second || total > 2*time.Minute {
		t.Errorf("the %d retries take %s, want about a minute", MaxRetries, total)
	}
}

// Failures counts permanent failures in a row per key, from 1, until
// forgotten.
func TestFailures_CountInARowUntilForgotten(t *testing.T) {
	var f Failures
	for i := 1; i <= 3; i++ {
		if n := f.Note("app/1"); n != i {
			t.Errorf("Note %d = %d", i, n)
		}
	}
	if n := f.Note("app/2"); n != 1 {
		t.Errorf("another generation starts at %d, want 1", n)
	}
	f.Forget("app/1")
	if n := f.Note("app/1"); n != 1 {
		t.Errorf("after Forget: %d, want 1", n)
	}
}

// A chart that fails to render with its values is permanent, and counts
// towards the end of the workflow; a render that succeeds, or fails
// for a reason that may pass, starts the count again.
func TestFailures_RenderFailureCountsAndSuccessForgets(t *testing.T) {
	rendered := &cueeval.Error{Reason: v1beta1.ReasonRenderFailed, Message: "chart strict-0.1.0 does not render: values don't meet the specifications of the schema", Chart: true}
	if rf := RenderFailure(fmt.Errorf("component %q: %w", "web", rendered)); !Permanent(rf) {
		t.Fatalf("a chart render failure: %v is not permanent", rf)
	}
	if rf := RenderFailure(&cueeval.Error{Reason: v1beta1.ReasonRenderFailed, Message: "invalid CUE"}); rf != nil {
		t.Errorf("a template's own failure is no chart's: %v", rf)
	}
	var f Failures
	for i := 1; i <= 3; i++ {
		if n, ended := f.Ended("app/1", RenderFailure(rendered)); n != i || ended {
			t.Errorf("failure %d: count %d, ended %v", i, n, ended)
		}
	}
	if n, _ := f.Ended("app/1", nil); n != 0 {
		t.Errorf("a success counts %d", n)
	}
	if n, _ := f.Ended("app/1", RenderFailure(rendered)); n != 1 {
		t.Errorf("after a success the count is %d, want 1", n)
	}
	f.Ended("app/1", &Error{Reason: ReasonFetching, Err: errors.New("still fetching")})
	if n, _ := f.Ended("app/1", RenderFailure(rendered)); n != 1 {
		t.Errorf("after a transient failure the count is %d, want 1", n)
	}
}
