package workflow

// Judge is the controller's side of Finish: what the pass found, after
// its objects were applied and their health evaluated, of the steps it
// ran. A gated run asks Done of each step it ran; a run of a version
// delivered in one pass asks Delivery once.
type Judge interface {
	// Done reports whether a step a gated run ran is done (every object
	// of the step applied and every component it delivers healthy, or
	// the Application it waits for running) and, when not, what it
	// waits for.
	Done(step string) (done bool, message string)
	// Delivery is what the pass found of the components of a version
	// delivered in one pass.
	Delivery() Delivery
}

// JudgeFunc is a Judge of gated runs alone: its Delivery is empty.
type JudgeFunc func(step string) (done bool, message string)

// Done calls f.
func (f JudgeFunc) Done(step string) (bool, string) { return f(step) }

// Delivery is empty: every component pending.
func (f JudgeFunc) Delivery() Delivery { return Delivery{} }

// Delivery is what a pass found of the components of a version it
// delivered in one pass: the facts the steps of a one-pass run are
// judged by (see OnePassRun).
type Delivery struct {
	// Kept is whether the pass kept the version: it had a tracker, whose
	// objects it applied (or tried to).
	Kept bool
	// Failed are the components an object of which could not be applied,
	// with the error, in the order found.
	Failed []Note
	// Waiting are the components left unapplied while the components
	// they depend on are not ready.
	Waiting []string
	// Unhealthy are the components not healthy by their definition's
	// health policy, with the health message (empty when there is none).
	Unhealthy []Note
}

// Note is one component and what a pass found of it.
type Note struct {
	Component string
	Message   string
}
