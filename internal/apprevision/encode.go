package apprevision

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/tracker"
)

// Encode packs rev's fields into spec.compression with compression (gzip
// or zstd), leaving the stub Application KubeVela leaves (an empty
// component list), or stores them as they are for CompressionNone. The
// data is the base64 of the compressed JSON of the fields, KubeVela's
// CompressedText encoding: KubeVela's own clients (vela revision list,
// live-diff, workflow rollback) decode it.
func Encode(rev *v1beta1.ApplicationRevision, compression v1beta1.CompressionType) error {
	fields, err := Decode(rev)
	if err != nil {
		return err
	}
	if compression == v1beta1.CompressionNone {
		rev.Spec = v1beta1.ApplicationRevisionSpec{ApplicationRevisionFields: fields}
		return nil
	}
	raw, err := json.Marshal(fields)
	if err != nil {
		return fmt.Errorf("encoding application revision %s: %w", rev.Name, err)
	}
	if len(raw) > tracker.MaxDecodedSize {
		return fmt.Errorf("application revision %s is %d bytes as JSON, over the %d a revision can hold", rev.Name, len(raw), tracker.MaxDecodedSize)
	}
	packed, err := tracker.Compress(compression, raw)
	if err != nil {
		return fmt.Errorf("compressing application revision %s: %w", rev.Name, err)
	}
	rev.Spec = v1beta1.ApplicationRevisionSpec{
		ApplicationRevisionFields: stub(),
		Compression: v1beta1.ApplicationRevisionCompression{
			Type: compression,
			Data: base64.StdEncoding.EncodeToString(packed),
		},
	}
	return nil
}

// Decode returns rev's fields whichever way they are stored. A revision
// whose data does not decode (edited by hand, or a compression this
// version does not know) is an error naming it, never a crash.
func Decode(rev *v1beta1.ApplicationRevision) (v1beta1.ApplicationRevisionFields, error) {
	c := rev.Spec.Compression
	if c.Type == v1beta1.CompressionNone {
		return *rev.Spec.ApplicationRevisionFields.DeepCopy(), nil
	}
	packed, err := base64.StdEncoding.DecodeString(c.Data)
	if err != nil {
		return v1beta1.ApplicationRevisionFields{}, fmt.Errorf("application revision %s: spec.compression.data is not base64: %w", rev.Name, err)
	}
	raw, err := tracker.Decompress(c.Type, packed)
	if err != nil {
		return v1beta1.ApplicationRevisionFields{}, fmt.Errorf("application revision %s: %w", rev.Name, err)
	}
	var fields v1beta1.ApplicationRevisionFields
	if err := json.Unmarshal(raw, &fields); err != nil {
		return v1beta1.ApplicationRevisionFields{}, fmt.Errorf("application revision %s: decoding spec.compression.data: %w", rev.Name, err)
	}
	return fields, nil
}

// Decoded returns a copy of rev with its fields decoded into the spec
// and no compression: the full object, as KubeVela's clients see it.
func Decoded(rev *v1beta1.ApplicationRevision) (*v1beta1.ApplicationRevision, error) {
	fields, err := Decode(rev)
	if err != nil {
		return nil, err
	}
	out := rev.DeepCopy()
	out.Spec = v1beta1.ApplicationRevisionSpec{ApplicationRevisionFields: fields}
	return out, nil
}

// stub is what a compressed revision keeps uncompressed: an Application
// with an empty component list, so spec.application is never missing.
func stub() v1beta1.ApplicationRevisionFields {
	return v1beta1.ApplicationRevisionFields{
		Application: v1beta1.Application{Spec: v1beta1.ApplicationSpec{Components: []v1beta1.ApplicationComponent{}}},
	}
}

// AnnotationDefinitionsDropped lists, on a superseded revision, the
// definitions Thin dropped from it ("componentDefinitions/webservice,
// traitDefinitions/scaler"): the templates are the bulk of a revision,
// and only the live one is diffed against by default.
const AnnotationDefinitionsDropped = "steward.oam.dev/definitions-dropped"

// Thin drops the recorded definitions from a superseded revision, keeping
// the Application's spec (what `vela workflow rollback` and `vela up
// --revision` read), its metadata and status, and names what it dropped
// in AnnotationDefinitionsDropped. It re-encodes with compression and
// says whether anything was dropped (false: the revision is as it was).
func Thin(rev *v1beta1.ApplicationRevision, compression v1beta1.CompressionType) (bool, error) {
	fields, err := Decode(rev)
	if err != nil {
		return false, err
	}
	var dropped []string
	add := func(field string, names []string) {
		slices.Sort(names)
		for _, n := range names {
			dropped = append(dropped, field+"/"+n)
		}
	}
	add("componentDefinitions", slices.Collect(maps.Keys(fields.ComponentDefinitions)))
	add("workloadDefinitions", slices.Collect(maps.Keys(fields.WorkloadDefinitions)))
	add("traitDefinitions", slices.Collect(maps.Keys(fields.TraitDefinitions)))
	add("policyDefinitions", slices.Collect(maps.Keys(fields.PolicyDefinitions)))
	add("workflowStepDefinitions", slices.Collect(maps.Keys(fields.WorkflowStepDefinitions)))
	if len(dropped) == 0 {
		return false, nil
	}
	fields.ComponentDefinitions, fields.WorkloadDefinitions, fields.TraitDefinitions = nil, nil, nil
	fields.PolicyDefinitions, fields.WorkflowStepDefinitions = nil, nil
	rev.Spec = v1beta1.ApplicationRevisionSpec{ApplicationRevisionFields: fields}
	if rev.Annotations == nil {
		rev.Annotations = map[string]string{}
	}
	if prev := rev.Annotations[AnnotationDefinitionsDropped]; prev != "" {
		dropped = append(strings.Split(prev, ","), dropped...)
		slices.Sort(dropped)
		dropped = slices.Compact(dropped)
	}
	rev.Annotations[AnnotationDefinitionsDropped] = strings.Join(dropped, ",")
	return true, Encode(rev, compression)
}
