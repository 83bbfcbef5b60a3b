package apprevision

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/testcp"
)

// The revision as the API server stores it under config/crd's schema:
// compressed with its stub Application, or uncompressed with every
// recorded definition's metadata (nothing pruned), and its status written
// through the status subresource.
func TestCRDStoresRevisions(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server")
	}
	plane := testcp.StartT(t, testcp.Options{CRDDirectoryPaths: []string{"../../config/crd"}}, "hub")[0]
	scheme := runtime.NewScheme()
	if err := v1beta1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := plane.Client(client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i, compression := range []v1beta1.CompressionType{v1beta1.CompressionGzip, v1beta1.CompressionZstd, v1beta1.CompressionNone} {
		app := sampleApp()
		app.Namespace = "default"
		rev, err := Build(app, sampleDefs(), int64(i+1))
		if err != nil {
			t.Fatal(err)
		}
		want := rev.Spec.ApplicationRevisionFields.DeepCopy()
		rev.OwnerReferences = nil // no such Application on this server
		if err := Encode(rev, compression); err != nil {
			t.Fatal(err)
		}
		if err := c.Create(ctx, rev); err != nil {
			t.Fatalf("%s: creating %s: %v", compression, rev.Name, err)
		}
		got := &v1beta1.ApplicationRevision{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(rev), got); err != nil {
			t.Fatal(err)
		}
		fields, err := Decode(got)
		if err != nil {
			t.Fatal(err)
		}
		if !equality.Semantic.DeepEqual(&fields, want) {
			t.Errorf("%s: the server gave back\n%+v\nwant\n%+v", compression, fields, *want)
		}
		if cd := fields.ComponentDefinitions["webservice"]; cd == nil || cd.Annotations[v1beta1.AnnotationDefinitionDescription] != "a web service" {
			t.Errorf("%s: the definition's metadata was pruned: %+v", compression, cd)
		}
		OutcomeOf(app, got.Name, got.CreationTimestamp).Apply(got)
		if err := c.Status().Update(ctx, got); err != nil {
			t.Fatalf("%s: status: %v", compression, err)
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(rev), got); err != nil {
			t.Fatal(err)
		}
		if !got.Status.Succeeded || got.Status.Workflow == nil || got.Status.Workflow.Phase != PhaseSucceeded {
			t.Errorf("%s: status %+v", compression, got.Status)
		}
	}
}

// KubeVela's clients decode spec.compression with kubevela/pkg's
// CompressedText: base64, then gzip (or zstd), then JSON into its
// compressible fields. The same steps with the standard library read the
// fields back.
func TestDataIsKubeVelasEncoding(t *testing.T) {
	rev, _ := Build(sampleApp(), sampleDefs(), 1)
	if err := Encode(rev, v1beta1.CompressionGzip); err != nil {
		t.Fatal(err)
	}
	packed, err := base64.StdEncoding.DecodeString(rev.Spec.Compression.Data)
	if err != nil {
		t.Fatal(err)
	}
	r, err := gzip.NewReader(bytes.NewReader(packed))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"application", "componentDefinitions", "traitDefinitions"} {
		if len(fields[key]) == 0 {
			t.Errorf("no %s in the data (keys: %v)", key, fields)
		}
	}
}
