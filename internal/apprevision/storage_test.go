package apprevision

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/steward-oam/steward/api/v1beta1"
)

// The storage measure of docs/benchmarks.md ("ApplicationRevision
// storage"): a realistic Application (the corpus's web-full webservice
// with the scaler, gateway, labels and expose traits, and those five
// definitions as KubeVela ships them) at 1,500 Applications × 10
// revisions, each revision a new image tag and replica count, in
// KubeVela's uncompressed shape and in Steward's compressed one.
//
//	STEWARD_APPREV_STORAGE=1 go test ./internal/apprevision -run TestStorage -v
//	go test ./internal/apprevision -run '^$' -bench Storage -benchmem

const (
	storageApps      = 1500
	storageRevisions = 10
)

func corpusDir(t testing.TB) string {
	dir := os.Getenv("STEWARD_COMPAT_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "compat")
	}
	if _, err := os.Stat(filepath.Join(dir, "definitions", "webservice.yaml")); err != nil {
		t.Skipf("the compatibility corpus (../shared/compat) is absent: %v", err)
	}
	return dir
}

func readYAML(t testing.TB, path string, into any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// storageFixture is the Application and its definitions, read once.
type storageFixture struct {
	app  *v1beta1.Application
	defs Definitions
}

func loadFixture(t testing.TB) storageFixture {
	dir := corpusDir(t)
	app := &v1beta1.Application{}
	readYAML(t, filepath.Join(dir, "cases", "web-full", "app.yaml"), app)
	traits := []string{"scaler", "gateway", "labels", "expose"}
	props := map[string]string{
		"scaler":  `{"replicas": 3}`,
		"gateway": `{"domain": "api.example.com", "http": {"/": 8080}}`,
		"labels":  `{"team": "payments", "tier": "backend"}`,
		"expose":  `{"port": [8080], "type": "ClusterIP"}`,
	}
	for _, tr := range traits {
		app.Spec.Components[0].Traits = append(app.Spec.Components[0].Traits, v1beta1.ApplicationTrait{
			Type: tr, Properties: raw(props[tr]),
		})
	}
	cd := &v1beta1.ComponentDefinition{}
	readYAML(t, filepath.Join(dir, "definitions", "webservice.yaml"), cd)
	defs := Definitions{Components: map[string]*v1beta1.ComponentDefinition{"webservice": cd}, Traits: map[string]*v1beta1.TraitDefinition{}}
	for _, tr := range traits {
		td := &v1beta1.TraitDefinition{}
		readYAML(t, filepath.Join(dir, "definitions", tr+".yaml"), td)
		defs.Traits[tr] = td
	}
	return storageFixture{app: app, defs: defs}
}

// revision builds revision r of app i as the API server returns it:
// with a uid, resourceVersion, creation time and status.
func (f storageFixture) revision(t testing.TB, i, r int, compression v1beta1.CompressionType) *v1beta1.ApplicationRevision {
	app := f.app.DeepCopy()
	app.Name = fmt.Sprintf("web-%04d", i)
	app.Namespace = fmt.Sprintf("team-%02d", i%50)
	app.UID = types.UID(fmt.Sprintf("6f1c2a7e-0000-4000-8000-%012d", i))
	app.Generation = int64(r)
	app.Annotations = map[string]string{v1beta1.AnnotationPublishVersion: fmt.Sprintf("2.1.%d", r)}
	c := &app.Spec.Components[0]
	var props map[string]any
	if err := json.Unmarshal(c.Properties.Raw, &props); err != nil {
		t.Fatal(err)
	}
	props["image"] = fmt.Sprintf("ghcr.io/example/api:2.1.%d", r)
	c.Properties = raw(mustJSON(t, props))
	c.Traits[0].Properties = raw(fmt.Sprintf(`{"replicas": %d}`, 2+r%3))
	rev, err := Build(app, f.defs, int64(r))
	if err != nil {
		t.Fatal(err)
	}
	if err := Encode(rev, compression); err != nil {
		t.Fatal(err)
	}
	created := metav1.NewTime(time.Date(2026, 12, 1, 10, r, i%60, 0, time.UTC))
	rev.UID = types.UID(fmt.Sprintf("9a3d5b1c-%04d-4000-8000-%012d", r, i))
	rev.ResourceVersion = fmt.Sprintf("%d", 100000+i*storageRevisions+r)
	rev.CreationTimestamp = created
	rev.Generation = 1
	Outcome{Status: &v1beta1.WorkflowStatus{AppRevision: rev.Name, Mode: "StepByStep-DAG", Phase: PhaseSucceeded, Finished: true,
		StartTime: created, EndTime: created,
		Steps: []v1beta1.WorkflowStepStatus{{StepStatus: v1beta1.StepStatus{ID: "d8x1k2", Name: "deploy", Type: "deploy", Phase: "succeeded",
			FirstExecuteTime: created, LastExecuteTime: created}}}}, Succeeded: true, Ended: true}.Apply(rev)
	return rev
}

func mustJSON(t testing.TB, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// countingWriter counts what a LIST response would carry without
// holding it.
type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

// storageFigures are the measured sizes of one shape.
type storageFigures struct {
	perRevision float64 // mean bytes of one revision's JSON
	largest     int     // the largest revision's JSON
	list        int64   // bytes of the JSON of a LIST of all revisions
}

// measure sizes every revision and their LIST; thin makes the superseded
// revisions (all but each Application's newest) as Thin leaves them.
func measure(t testing.TB, f storageFixture, compression v1beta1.CompressionType, thin bool) storageFigures {
	var w countingWriter
	var out io.Writer = &w
	var total int64
	largest := 0
	_, _ = io.WriteString(out, `{"apiVersion":"core.oam.dev/v1beta1","items":[`)
	for i := 0; i < storageApps; i++ {
		for r := 1; r <= storageRevisions; r++ {
			rev := f.revision(t, i, r, compression)
			if thin && r < storageRevisions {
				if _, err := Thin(rev, compression); err != nil {
					t.Fatal(err)
				}
			}
			b, err := json.Marshal(rev)
			if err != nil {
				t.Fatal(err)
			}
			if i+r > 1 {
				_, _ = io.WriteString(out, ",")
			}
			_, _ = out.Write(b)
			total += int64(len(b))
			largest = max(largest, len(b))
		}
	}
	_, _ = io.WriteString(out, `],"kind":"ApplicationRevisionList","metadata":{"resourceVersion":"250000"}}`)
	return storageFigures{perRevision: float64(total) / float64(storageApps*storageRevisions), largest: largest, list: w.n}
}

// TestStorage prints the figures of docs/benchmarks.md and holds the
// goal: Steward's revisions as it keeps them (compressed, and the
// superseded ones without the definitions' templates) and their LIST are
// at most a tenth of KubeVela's uncompressed ones. It builds 60,000
// revisions (about two minutes), so it runs only when asked.
func TestStorage(t *testing.T) {
	if os.Getenv("STEWARD_APPREV_STORAGE") == "" {
		t.Skip("set STEWARD_APPREV_STORAGE=1 to measure (about two minutes)")
	}
	f := loadFixture(t)
	kv := measure(t, f, v1beta1.CompressionNone, false)
	row := func(name string, st storageFigures) string {
		return fmt.Sprintf("| %s | %.0f | %d | %s | %.3f |", name, st.perRevision, st.largest, mib(st.list), float64(st.list)/float64(kv.list))
	}
	rows := []string{row("KubeVela's shape, uncompressed (its default)", kv)}
	for _, c := range []v1beta1.CompressionType{v1beta1.CompressionGzip, v1beta1.CompressionZstd} {
		rows = append(rows, row(fmt.Sprintf("every revision whole, %s", c), measure(t, f, c, false)))
	}
	st := measure(t, f, v1beta1.CompressionGzip, true)
	rows = append(rows, row("Steward: gzip, superseded revisions without definitions", st))
	if ratio := float64(st.list) / float64(kv.list); ratio > 0.1 || st.perRevision/kv.perRevision > 0.1 {
		t.Errorf("a revision is %.0f bytes against %.0f, a LIST %d against %d (%.1f%%): over the goal of a tenth",
			st.perRevision, kv.perRevision, st.list, kv.list, 100*ratio)
	}
	t.Logf("%d Applications × %d revisions\n| Shape | bytes per revision (mean) | largest | LIST of all | LIST against KubeVela's |\n|---|---|---|---|---|\n%s",
		storageApps, storageRevisions, strings.Join(rows, "\n"))
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// BenchmarkStorage reports bytes per revision and the cost of encoding one.
func BenchmarkStorage(b *testing.B) {
	f := loadFixture(b)
	for _, c := range []v1beta1.CompressionType{v1beta1.CompressionNone, v1beta1.CompressionGzip, v1beta1.CompressionZstd} {
		name := string(c)
		if name == "" {
			name = "kubevela-uncompressed"
		}
		b.Run(name, func(b *testing.B) {
			size := 0
			for i := 0; b.Loop(); i++ {
				raw, err := json.Marshal(f.revision(b, i%storageApps, 1+i%storageRevisions, c))
				if err != nil {
					b.Fatal(err)
				}
				size = len(raw)
			}
			b.ReportMetric(float64(size), "bytes/revision")
		})
	}
}
