package apprevision

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/steward-oam/steward/api/v1beta1"
)

func raw(s string) *runtime.RawExtension { return &runtime.RawExtension{Raw: []byte(s)} }

func sampleApp() *v1beta1.Application {
	return &v1beta1.Application{
		ObjectMeta: metav1.ObjectMeta{
			Name: "shop", Namespace: "prod", UID: "u-1", Generation: 3, ResourceVersion: "42",
			Labels: map[string]string{"team": "payments"},
			Annotations: map[string]string{
				v1beta1.AnnotationPublishVersion: "alpha",
				kubectlLastApplied:               `{"huge":"copy"}`,
			},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		},
		Spec: v1beta1.ApplicationSpec{Components: []v1beta1.ApplicationComponent{{
			Name: "api", Type: "webservice", Properties: raw(`{"image":"nginx:1.27"}`),
			Traits: []v1beta1.ApplicationTrait{{Type: "scaler", Properties: raw(`{"replicas":2}`)}},
		}}},
		Status: v1beta1.ApplicationStatus{Phase: v1beta1.ApplicationRunning, LatestRevision: &v1beta1.Revision{Name: "shop-v2", Revision: 2}},
	}
}

func sampleDefs() Definitions {
	return Definitions{
		Components: map[string]*v1beta1.ComponentDefinition{"webservice": {
			ObjectMeta: metav1.ObjectMeta{Name: "webservice", Namespace: "vela-system",
				Annotations: map[string]string{v1beta1.AnnotationDefinitionDescription: "a web service"}},
			Spec: v1beta1.ComponentDefinitionSpec{Schematic: &v1beta1.Schematic{CUE: &v1beta1.CUE{Template: "output: {}"}}},
		}},
		Traits: map[string]*v1beta1.TraitDefinition{"scaler": {
			ObjectMeta: metav1.ObjectMeta{Name: "scaler", Namespace: "vela-system"},
			Spec:       v1beta1.TraitDefinitionSpec{Schematic: &v1beta1.Schematic{CUE: &v1beta1.CUE{Template: "patch: {}"}}},
		}},
	}
}

func TestBuildKubeVelaShape(t *testing.T) {
	rev, err := Build(sampleApp(), sampleDefs(), 3)
	if err != nil {
		t.Fatal(err)
	}
	if rev.Name != "shop-v3" || rev.Namespace != "prod" {
		t.Errorf("name %s/%s, want prod/shop-v3", rev.Namespace, rev.Name)
	}
	if rev.Labels[v1beta1.LabelAppName] != "shop" || rev.Labels["team"] != "payments" || len(rev.Labels[v1beta1.LabelAppRevisionHash]) != 16 {
		t.Errorf("labels %v: want the Application's, app.oam.dev/name and a 16-digit hash", rev.Labels)
	}
	if PublishVersionOf(rev) != "alpha" || rev.Annotations[kubectlLastApplied] != "" {
		t.Errorf("annotations %v: want the publishVersion, without kubectl's last-applied copy", rev.Annotations)
	}
	if len(rev.OwnerReferences) != 1 || rev.OwnerReferences[0].UID != "u-1" || !*rev.OwnerReferences[0].Controller {
		t.Errorf("owner %v: want the Application as controller", rev.OwnerReferences)
	}
	a := rev.Spec.Application
	if a.Name != "shop" || a.Kind != "Application" || a.Status.Phase != "" || a.ManagedFields != nil || a.Annotations[kubectlLastApplied] != "" {
		t.Errorf("the snapshot keeps what it should not: %+v", a.ObjectMeta)
	}
	cd := rev.Spec.ComponentDefinitions["webservice"]
	if cd == nil || cd.Name != "webservice" || cd.Annotations[v1beta1.AnnotationDefinitionDescription] == "" || cd.Kind != "ComponentDefinition" {
		t.Errorf("component definition %+v: want it whole, with its metadata", cd)
	}
	if rev.Spec.TraitDefinitions["scaler"] == nil {
		t.Error("the trait definition is missing")
	}
	for _, bad := range []struct {
		app *v1beta1.Application
		n   int64
		msg string
	}{{nil, 1, "no Application"}, {sampleApp(), 0, "want 1 or more"}} {
		if _, err := Build(bad.app, Definitions{}, bad.n); err == nil || !strings.Contains(err.Error(), bad.msg) {
			t.Errorf("Build(%v, %d) = %v, want %q", bad.app != nil, bad.n, err, bad.msg)
		}
	}
}

func TestHash(t *testing.T) {
	base, _ := Build(sampleApp(), sampleDefs(), 1)
	h := base.Labels[v1beta1.LabelAppRevisionHash]
	relabelled := sampleApp()
	relabelled.Annotations[v1beta1.AnnotationPublishVersion] = "beta"
	relabelled.Labels["x"] = "y"
	otherSpec := sampleApp()
	otherSpec.Spec.Components[0].Properties = raw(`{"image":"nginx:1.28"}`)
	otherDef := sampleDefs()
	otherDef.Traits["scaler"].Spec.Schematic.CUE.Template = "patch: {spec: replicas: 1}"
	for _, c := range []struct {
		name string
		app  *v1beta1.Application
		defs Definitions
		same bool
	}{
		{"metadata only", relabelled, sampleDefs(), true},
		{"another spec", otherSpec, sampleDefs(), false},
		{"another definition", sampleApp(), otherDef, false},
		{"a definition fewer", sampleApp(), Definitions{Components: sampleDefs().Components}, false},
	} {
		rev, err := Build(c.app, c.defs, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got := rev.Labels[v1beta1.LabelAppRevisionHash] == h; got != c.same {
			t.Errorf("%s: same hash = %v, want %v", c.name, got, c.same)
		}
	}
}

func TestNames(t *testing.T) {
	for _, c := range []struct {
		name string
		n    int64
		ok   bool
	}{{"shop-v1", 1, true}, {"my-app-v12", 12, true}, {"shop-valpha", 0, false}, {"shop", 0, false}, {"shop-v0", 0, false}, {"shop-v-3", 0, false}} {
		n, ok := NumberOf(c.name)
		if n != c.n || ok != c.ok {
			t.Errorf("NumberOf(%q) = %d, %v; want %d, %v", c.name, n, ok, c.n, c.ok)
		}
	}
	if NameOf("my-app", 7) != "my-app-v7" {
		t.Error(NameOf("my-app", 7))
	}
}

func TestEncodeDecode(t *testing.T) {
	for _, c := range []v1beta1.CompressionType{v1beta1.CompressionNone, v1beta1.CompressionGzip, v1beta1.CompressionZstd} {
		rev, _ := Build(sampleApp(), sampleDefs(), 2)
		want := rev.Spec.ApplicationRevisionFields.DeepCopy()
		if err := Encode(rev, c); err != nil {
			t.Fatal(err)
		}
		if c != v1beta1.CompressionNone {
			if rev.Spec.Compression.Type != c || rev.Spec.Compression.Data == "" || rev.Spec.ComponentDefinitions != nil ||
				rev.Spec.Application.Spec.Components == nil || len(rev.Spec.Application.Spec.Components) != 0 {
				t.Errorf("%s: stored %+v, want the stub Application and the data", c, rev.Spec)
			}
			// Through JSON, as the API server stores it.
			b, _ := json.Marshal(rev)
			if !strings.Contains(string(b), `"spec":{"components":[]}`) {
				t.Errorf("%s: %s lacks the stub KubeVela writes", c, b)
			}
			rev = &v1beta1.ApplicationRevision{}
			if err := json.Unmarshal(b, rev); err != nil {
				t.Fatal(err)
			}
		}
		got, err := Decode(rev)
		if err != nil {
			t.Fatal(err)
		}
		if !equality.Semantic.DeepEqual(&got, want) {
			t.Errorf("%s: decoded\n%+v\nwant\n%+v", c, got, *want)
		}
		full, err := Decoded(rev)
		if err != nil || full.Spec.Compression.Type != "" || full.Spec.ComponentDefinitions["webservice"] == nil {
			t.Errorf("%s: Decoded = %+v, %v", c, full, err)
		}
		// Encoding again (a revision read back and written) keeps it whole.
		if err := Encode(rev, v1beta1.CompressionZstd); err != nil {
			t.Fatal(err)
		}
		if again, _ := Decode(rev); !equality.Semantic.DeepEqual(&again, want) {
			t.Errorf("%s: re-encoded revision lost fields", c)
		}
	}
}

func TestDecodeBadData(t *testing.T) {
	for _, c := range []struct {
		name string
		comp v1beta1.ApplicationRevisionCompression
		msg  string
	}{
		{"not base64", v1beta1.ApplicationRevisionCompression{Type: v1beta1.CompressionZstd, Data: "%%%"}, "not base64"},
		{"not zstd", v1beta1.ApplicationRevisionCompression{Type: v1beta1.CompressionZstd, Data: base64.StdEncoding.EncodeToString([]byte("plain"))}, "zstd"},
		{"not gzip", v1beta1.ApplicationRevisionCompression{Type: v1beta1.CompressionGzip, Data: base64.StdEncoding.EncodeToString([]byte("plain"))}, "gzip"},
		{"unknown type", v1beta1.ApplicationRevisionCompression{Type: "lz4", Data: "AAAA"}, `unknown compression "lz4"`},
	} {
		rev := &v1beta1.ApplicationRevision{ObjectMeta: metav1.ObjectMeta{Name: "shop-v1"}, Spec: v1beta1.ApplicationRevisionSpec{Compression: c.comp}}
		_, err := Decode(rev)
		if err == nil || !strings.Contains(err.Error(), c.msg) || !strings.Contains(err.Error(), "shop-v1") {
			t.Errorf("%s: %v, want an error naming shop-v1 and %q", c.name, err, c.msg)
		}
	}
}

func revs(names ...string) []v1beta1.ApplicationRevision {
	var out []v1beta1.ApplicationRevision
	for _, n := range names {
		out = append(out, v1beta1.ApplicationRevision{ObjectMeta: metav1.ObjectMeta{Name: n}})
	}
	return out
}

func TestBeyond(t *testing.T) {
	for _, c := range []struct {
		name  string
		revs  []v1beta1.ApplicationRevision
		inUse map[string]bool
		limit int
		want  []string
	}{
		{"under the limit", revs("a-v1", "a-v2"), map[string]bool{"a-v2": true}, 10, nil},
		// KubeVela keeps limit revisions besides the live one.
		{"limit plus the live one", revs("a-v3", "a-v1", "a-v2", "a-v4"), map[string]bool{"a-v4": true}, 2, []string{"a-v1"}},
		{"numbers, not names, order", revs("a-v10", "a-v9", "a-v11"), map[string]bool{"a-v11": true}, 1, []string{"a-v9"}},
		{"the live one is old (a rollback)", revs("a-v1", "a-v2", "a-v3", "a-v4"), map[string]bool{"a-v1": true}, 1, []string{"a-v2", "a-v3"}},
		{"several in use", revs("a-v1", "a-v2", "a-v3", "a-v4"), map[string]bool{"a-v1": true, "a-v4": true}, 1, []string{"a-v2"}},
		{"limit 0 keeps the live one", revs("a-v1", "a-v2"), map[string]bool{"a-v2": true}, 0, []string{"a-v1"}},
		{"in use but gone counts nothing", revs("a-v1", "a-v2", "a-v3"), map[string]bool{"a-v9": true}, 2, []string{"a-v1"}},
		{"negative keeps all", revs("a-v1", "a-v2", "a-v3"), nil, -1, nil},
	} {
		got := Beyond(c.revs, c.inUse, c.limit)
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestTrim(t *testing.T) {
	for _, c := range []struct {
		name    string
		revs    []v1beta1.ApplicationRevision
		live    string
		tracked map[string]bool
		limit   int
		want    []string
	}{
		{"nothing tracked: the limit besides the live one", revs("a-v1", "a-v2", "a-v3"), "a-v3", nil, 1, []string{"a-v1"}},
		// v1's tracker is kept past the limit: its revision stays with it.
		{"a tracked revision past the limit stays", revs("a-v1", "a-v2", "a-v3"), "a-v3", map[string]bool{"a-v1": true, "a-v2": true, "a-v3": true}, 1, nil},
		// Tracked ones fill the limit first; untracked ones get the rest.
		{"tracked ones count first", revs("a-v1", "a-v2", "a-v3", "a-v4"), "a-v4", map[string]bool{"a-v1": true}, 1, []string{"a-v2", "a-v3"}},
		{"room left for the newest untracked", revs("a-v1", "a-v2", "a-v3", "a-v4"), "a-v4", map[string]bool{"a-v1": true}, 2, []string{"a-v2"}},
		{"a tracked name that is gone counts nothing", revs("a-v1", "a-v2", "a-v3"), "a-v3", map[string]bool{"a-v9": true}, 1, []string{"a-v1"}},
		{"negative keeps all", revs("a-v1", "a-v2"), "a-v2", nil, -1, nil},
	} {
		got := Trim(c.revs, c.live, c.tracked, c.limit)
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestNextAndForVersion(t *testing.T) {
	for _, c := range []struct {
		name   string
		latest *v1beta1.Revision
		revs   []v1beta1.ApplicationRevision
		want   int64
	}{
		{"first", nil, nil, 1},
		{"after the latest", &v1beta1.Revision{Name: "a-v4"}, revs("a-v3", "a-v4"), 5},
		{"past a rolled-back latest", &v1beta1.Revision{Name: "a-v2"}, revs("a-v2", "a-v7"), 8},
		{"pruned history", &v1beta1.Revision{Name: "a-v12"}, nil, 13},
		{"a latest of another naming", &v1beta1.Revision{Name: "a-alpha", Revision: 3}, revs("a-v1"), 2},
	} {
		if got := Next(c.latest, c.revs); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	rs := revs("a-v1", "a-v2", "a-v3")
	rs[0].Annotations = map[string]string{v1beta1.AnnotationPublishVersion: "alpha"}
	rs[1].Annotations = map[string]string{v1beta1.AnnotationPublishVersion: "beta"}
	rs[2].Annotations = map[string]string{v1beta1.AnnotationPublishVersion: "alpha"}
	if r := ForVersion(rs, "alpha"); r == nil || r.Name != "a-v3" {
		t.Errorf("ForVersion(alpha) = %v, want the newest, a-v3", r)
	}
	if ForVersion(rs, "gamma") != nil || ForVersion(rs, "") != nil {
		t.Error("ForVersion found a revision for a version none has")
	}
}

func TestOutcome(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 12, 7, 1, 0, 0, 0, time.UTC))
	withWorkflow := func(ws v1beta1.WorkflowStatus) *v1beta1.Application {
		a := sampleApp()
		a.Status.Workflow = &ws
		return a
	}
	withPhase := func(p v1beta1.ApplicationPhase) *v1beta1.Application {
		a := sampleApp()
		a.Status.Phase = p
		return a
	}
	for _, c := range []struct {
		name             string
		app              *v1beta1.Application
		succeeded, ended bool
		phase            string
	}{
		{"workflow succeeded", withWorkflow(v1beta1.WorkflowStatus{Phase: "succeeded", Finished: true}), true, true, "succeeded"},
		{"workflow failed", withWorkflow(v1beta1.WorkflowStatus{Phase: "failed", Finished: true}), false, true, "failed"},
		{"workflow terminated", withWorkflow(v1beta1.WorkflowStatus{Phase: "terminated", Terminated: true}), false, true, "terminated"},
		{"workflow suspended", withWorkflow(v1beta1.WorkflowStatus{Phase: "suspending", Suspend: true}), false, false, "suspending"},
		{"workflow executing", withWorkflow(v1beta1.WorkflowStatus{Phase: "executing"}), false, false, "executing"},
		{"one pass, running", withPhase(v1beta1.ApplicationRunning), true, true, "succeeded"},
		{"one pass, unhealthy", withPhase(v1beta1.ApplicationUnhealthy), true, true, "succeeded"},
		{"one pass, failed", withPhase(v1beta1.ApplicationWorkflowFailed), false, true, "failed"},
		{"one pass, terminated", withPhase(v1beta1.ApplicationWorkflowTerminated), false, true, "terminated"},
		{"one pass, dispatching", withPhase(v1beta1.ApplicationRunningWorkflow), false, false, "executing"},
		{"one pass, rendering", withPhase(v1beta1.ApplicationRendering), false, false, "executing"},
	} {
		o := OutcomeOf(c.app, "shop-v3", now)
		if o.Succeeded != c.succeeded || o.Ended != c.ended || o.Status.Phase != c.phase || o.Status.AppRevision != "shop-v3" {
			t.Errorf("%s: %+v (status %+v), want succeeded %v, ended %v, phase %s", c.name, o, o.Status, c.succeeded, c.ended, c.phase)
		}
	}
	// Apply writes once, then keeps the recorded times.
	rev := &v1beta1.ApplicationRevision{}
	if !OutcomeOf(withPhase(v1beta1.ApplicationRunningWorkflow), "shop-v3", now).Apply(rev) || rev.Status.Succeeded {
		t.Fatalf("first Apply: %+v", rev.Status)
	}
	later := metav1.NewTime(now.Add(time.Minute))
	if OutcomeOf(withPhase(v1beta1.ApplicationRunningWorkflow), "shop-v3", later).Apply(rev) {
		t.Error("Apply of the same outcome an instant later changed the status")
	}
	if !OutcomeOf(withPhase(v1beta1.ApplicationRunning), "shop-v3", later).Apply(rev) || !rev.Status.Succeeded ||
		!rev.Status.Workflow.StartTime.Equal(&now) || !rev.Status.Workflow.EndTime.Equal(&later) {
		t.Errorf("Apply of success: %+v", rev.Status.Workflow)
	}
	if OutcomeOf(withPhase(v1beta1.ApplicationRunning), "shop-v3", metav1.NewTime(later.Add(time.Hour))).Apply(rev) {
		t.Error("a succeeded revision's status changed again on a later pass")
	}
}

func TestThinAndRefill(t *testing.T) {
	rev, _ := Build(sampleApp(), sampleDefs(), 2)
	if err := Encode(rev, v1beta1.CompressionGzip); err != nil {
		t.Fatal(err)
	}
	whole := len(rev.Spec.Compression.Data)
	changed, err := Thin(rev, v1beta1.CompressionGzip)
	if err != nil || !changed {
		t.Fatalf("Thin = %v, %v", changed, err)
	}
	if got := rev.Annotations[AnnotationDefinitionsDropped]; got != "componentDefinitions/webservice,traitDefinitions/scaler" {
		t.Errorf("dropped annotation %q", got)
	}
	fields, err := Decode(rev)
	if err != nil || fields.ComponentDefinitions != nil || fields.TraitDefinitions != nil ||
		fields.Application.Spec.Components[0].Type != "webservice" || rev.Spec.Compression.Type != v1beta1.CompressionGzip {
		t.Errorf("thin revision: %+v, %v", fields, err)
	}
	if len(rev.Spec.Compression.Data) >= whole {
		t.Errorf("thin data %d bytes, not under the whole %d", len(rev.Spec.Compression.Data), whole)
	}
	if PublishVersionOf(rev) != "alpha" {
		t.Error("Thin lost the publishVersion")
	}
	if again, _ := Thin(rev, v1beta1.CompressionGzip); again {
		t.Error("a thin revision thinned again")
	}
	changed, err = Refill(rev, sampleDefs(), v1beta1.CompressionGzip)
	if err != nil || !changed {
		t.Fatalf("Refill = %v, %v", changed, err)
	}
	fields, _ = Decode(rev)
	if fields.ComponentDefinitions["webservice"] == nil || fields.TraitDefinitions["scaler"] == nil {
		t.Errorf("refilled: %+v", fields)
	}
	if _, ok := rev.Annotations[AnnotationDefinitionsDropped]; ok {
		t.Error("refilled revision still says its definitions were dropped")
	}
	if again, _ := Refill(rev, sampleDefs(), v1beta1.CompressionGzip); again {
		t.Error("a whole revision refilled again")
	}
}
