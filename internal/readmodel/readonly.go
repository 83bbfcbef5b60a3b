package readmodel

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// errReadOnly is what readOnlyClient answers to a write.
var errReadOnly = errors.New("the steward CLI does not write to clusters")

// readOnlyClient refuses every write, so that nothing the read model
// calls (for the CLI's read-only commands and the dashboard) can change a
// cluster, whatever apply's report-only mode does.
type readOnlyClient struct{ client.Client }

func (readOnlyClient) Create(context.Context, client.Object, ...client.CreateOption) error {
	return errReadOnly
}
func (readOnlyClient) Update(context.Context, client.Object, ...client.UpdateOption) error {
	return errReadOnly
}
func (readOnlyClient) Patch(context.Context, client.Object, client.Patch, ...client.PatchOption) error {
	return errReadOnly
}
func (readOnlyClient) Apply(context.Context, runtime.ApplyConfiguration, ...client.ApplyOption) error {
	return errReadOnly
}
func (readOnlyClient) Delete(context.Context, client.Object, ...client.DeleteOption) error {
	return errReadOnly
}
func (readOnlyClient) DeleteAllOf(context.Context, client.Object, ...client.DeleteAllOfOption) error {
	return errReadOnly
}
func (readOnlyClient) Status() client.SubResourceWriter { return readOnlyStatus{} }
func (readOnlyClient) SubResource(string) client.SubResourceClient {
	return readOnlyStatus{}
}

type readOnlyStatus struct{}

func (readOnlyStatus) Get(context.Context, client.Object, client.Object, ...client.SubResourceGetOption) error {
	return errReadOnly
}
func (readOnlyStatus) Create(context.Context, client.Object, client.Object, ...client.SubResourceCreateOption) error {
	return errReadOnly
}
func (readOnlyStatus) Update(context.Context, client.Object, ...client.SubResourceUpdateOption) error {
	return errReadOnly
}
func (readOnlyStatus) Patch(context.Context, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
	return errReadOnly
}
func (readOnlyStatus) Apply(context.Context, runtime.ApplyConfiguration, ...client.SubResourceApplyOption) error {
	return errReadOnly
}
