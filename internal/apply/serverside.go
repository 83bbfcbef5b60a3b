package apply

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/csaupgrade"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/steward-oam/steward/api/v1beta1"
)

// Conflict is a field another manager set that Steward's manifest sets to
// another value: Steward took it.
type Conflict struct {
	// Field is the field path: "spec.replicas".
	Field string
	// Manager is the field manager that had it: "kubectl-edit".
	Manager string
}

// applyServerSide is Apply by the ServerSide method.
func (a Applier) applyServerSide(ctx context.Context, c client.Client, desired *unstructured.Unstructured, opts Options) (Result, error) {
	if opts.ExpectMissing && !opts.ReportOnly && !opts.Shared {
		if res, err := a.create(ctx, c, desired, createGuard); err == nil {
			return res, nil
		}
		// It exists after all (or the create failed): read and handled as
		// usual, so the error, if any, is the one an apply gets.
	}
	live, err := readLive(ctx, c, desired)
	if err != nil {
		return Result{}, err
	}
	if live == nil && opts.ReportOnly {
		return Result{Action: Missing}, nil
	}
	if live == nil {
		if opts.Shared {
			desired = desired.DeepCopy()
			setSharedBy(desired, a.Owner.key())
		}
		return a.create(ctx, c, desired, "")
	}
	want, done, err := a.forExisting(ctx, c, live, desired, opts)
	if done != nil {
		return *done, err
	}
	return a.applyTo(ctx, c, live, want, opts.ReportOnly)
}

// create applies desired, found missing or expected to be, as
// FieldManager. The apply does not take fields: should someone have
// created the object in between with other values, it is refused as a
// conflict and checked again on the next pass. With resourceVersion
// createGuard it creates or does nothing: one request, where a read
// comes first otherwise. Either way the fields are FieldManager's applied
// fields from the start.
func (a Applier) create(ctx context.Context, c client.Client, desired *unstructured.Unstructured, resourceVersion string) (Result, error) {
	obj := desired.DeepCopy()
	obj.SetResourceVersion(resourceVersion)
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(FieldManager)); err != nil {
		return Result{}, fmt.Errorf("creating %s: %w", describe(desired), err)
	}
	return Result{Action: Created, Live: obj}, nil
}

// createGuard is the resourceVersion a create in one request applies
// with, as the apply's optimistic-concurrency precondition: it is the
// largest uint64, which no object's resourceVersion reaches (the
// storage's revisions are int64), so the API server refuses the apply to
// an object that exists (409, nothing stored), and ignores it when it
// creates the object. Mutating admission may see the refused apply
// merged into the existing object; nothing of it is stored.
const createGuard = "18446744073709551615"

// applyTo applies desired to the existing object live when it differs
// (serverSideDrift): nothing is sent when nothing would change, and
// reportOnly only reports. The apply names live's UID, so an object
// replaced in between is not written; fields other managers set to other
// values are taken (reported as Conflicts).
func (a Applier) applyTo(ctx context.Context, c client.Client, live, desired *unstructured.Unstructured, reportOnly bool) (Result, error) {
	fields := serverSideDrift(desired, live)
	if len(fields) == 0 {
		return Result{Action: Unchanged, Live: live}, nil
	}
	if reportOnly {
		return Result{Action: Drifted, Live: live, Fields: capped(fields)}, nil
	}
	if err := upgrade(ctx, c, live); err != nil {
		return Result{Live: live}, fmt.Errorf("upgrading %s from client-side apply: %w", describe(live), err)
	}
	obj := desired.DeepCopy()
	obj.SetUID(live.GetUID())
	conflicts, err := send(ctx, c, obj)
	if err != nil {
		return Result{Live: live}, fmt.Errorf("applying %s: %w", describe(desired), err)
	}
	return Result{Action: Configured, Live: obj, Fields: capped(fields), Conflicts: conflicts}, nil
}

// send applies obj, first without taking fields other managers set: when
// that is refused for conflicts, it applies again taking them, and
// returns what it took. obj receives the object applied.
func send(ctx context.Context, c client.Client, obj *unstructured.Unstructured) ([]Conflict, error) {
	try := obj.DeepCopy()
	err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(try), client.FieldOwner(FieldManager))
	if err == nil {
		obj.Object = try.Object
		return nil, nil
	}
	conflicts, ok := conflictsOf(err)
	if !ok {
		return nil, err
	}
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
		return nil, err
	}
	return conflicts, nil
}

// conflictsOf reads the field manager conflicts of a refused apply;
// conflicts with Steward's own metadata patches are left out.
func conflictsOf(err error) ([]Conflict, bool) {
	var status apierrors.APIStatus
	if !apierrors.IsConflict(err) || !errors.As(err, &status) || status.Status().Details == nil {
		return nil, false
	}
	var out []Conflict
	found := false
	for _, cause := range status.Status().Details.Causes {
		if cause.Type != metav1.CauseTypeFieldManagerConflict {
			continue
		}
		found = true
		// `conflict with "kubectl-edit" using apps/v1`
		_, rest, _ := strings.Cut(cause.Message, `"`)
		manager, _, _ := strings.Cut(rest, `"`)
		if manager == FieldManager {
			continue
		}
		out = append(out, Conflict{Field: strings.TrimPrefix(cause.Field, "."), Manager: manager})
	}
	return out, found
}

// Settled reports whether live, as a write by a returned it, is as that
// write leaves an object it has judged: false when a server-side apply
// landed on an object made client-side meanwhile (the last-applied
// annotation, written after the object was read, is still there), which
// only a pass that reads the object again upgrades.
func (a Applier) Settled(live *unstructured.Unstructured) bool {
	return a.Method == ClientSide || live == nil || live.GetAnnotations()[v1beta1.AnnotationLastApplied] == ""
}

// lastAppliedField is the last-applied annotation's field.
var lastAppliedField = fieldpath.MakePathOrDie("metadata", "annotations", v1beta1.AnnotationLastApplied)

// upgrade moves an object last applied client-side (by an older Steward,
// or by KubeVela: both keep the last-applied annotation) to server-side
// apply in place: the fields of the managers that wrote the annotation
// become FieldManager's applied fields (csaupgrade), so the apply that
// follows removes those the manifest no longer has, the annotation
// included. An object without the annotation is left as it is.
func upgrade(ctx context.Context, c client.Client, live *unstructured.Unstructured) error {
	if live.GetAnnotations()[v1beta1.AnnotationLastApplied] == "" {
		return nil
	}
	managers := sets.New(FieldManager)
	for _, e := range live.GetManagedFields() {
		if e.Operation != metav1.ManagedFieldsOperationUpdate || e.Subresource != "" || e.FieldsV1 == nil {
			continue
		}
		s := &fieldpath.Set{}
		if err := s.FromJSON(strings.NewReader(string(e.FieldsV1.Raw))); err == nil && s.Has(lastAppliedField) {
			managers.Insert(e.Manager)
		}
	}
	patch, err := csaupgrade.UpgradeManagedFieldsPatch(live, managers, FieldManager)
	if err != nil || patch == nil {
		return err
	}
	return c.Patch(ctx, live, client.RawPatch(types.JSONPatchType, patch))
}

// capped bounds a list of fields for reports.
func capped(fields []string) []string {
	if len(fields) > maxReportedFields {
		return append(fields[:maxReportedFields:maxReportedFields], "…")
	}
	return fields
}
