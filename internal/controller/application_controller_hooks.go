package controller

// hookPoint names a point in a pass where a test can stop the controller,
// as if it had been killed there.
type hookPoint int

const (
	// hookAfterRecord: the new version is recorded, nothing applied yet.
	hookAfterRecord hookPoint = iota
	// hookAfterMark: garbage is marked deleted, nothing deleted yet.
	hookAfterMark
	// hookAfterKeep: the version is applied, nothing after it done.
	hookAfterKeep
	// hookBeforeFinalizer: the Application was read, its finalizer not
	// added yet.
	hookBeforeFinalizer
	// hookAfterFinalizer: the finalizer was added, nothing recorded yet.
	hookAfterFinalizer
)

// hooks lets tests interrupt a pass. A hook returning an error ends the
// pass at that point, with nothing after it done. Nil in production.
type hooks map[hookPoint]func() error

func (h hooks) call(p hookPoint) error {
	if f := h[p]; f != nil {
		return f()
	}
	return nil
}
