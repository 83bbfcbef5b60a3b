package record

import "time"

// CPUCost is the CPU a controller's process tree used over a window of a
// scenario, against the Application reconciles and renders in it: what
// evaluating CUE in child processes costs a normal render (issue 27).
type CPUCost struct {
	// CPUSeconds is the user and system time of the controller and of
	// every process it started (Steward's CUE evaluators), alive or
	// exited; ChildCPUSeconds is the part its descendants used.
	CPUSeconds      float64 `json:"cpuSeconds,omitempty"`
	ChildCPUSeconds float64 `json:"childCPUSeconds,omitempty"`
	// Reconciles is the increase of
	// controller_runtime_reconcile_total{controller="application"}, and
	// CPUPerReconcileMs CPUSeconds over it, in milliseconds.
	Reconciles        float64 `json:"reconciles,omitempty"`
	CPUPerReconcileMs float64 `json:"cpuPerReconcileMs,omitempty"`
	// Renders and RenderMeanSeconds are the count and mean duration of the
	// reconciles' render stage (the histogram
	// steward_reconcile_stage_duration_seconds{stage="render"}); zero for a
	// controller without it.
	Renders           float64 `json:"renders,omitempty"`
	RenderMeanSeconds float64 `json:"renderMeanSeconds,omitempty"`
}

// Measured reports whether the harness measured CPU (results recorded
// before it did hold none).
func (c CPUCost) Measured() bool { return c.CPUSeconds > 0 }

// CoresOver is the CPU spread over a wall time: the cores used.
func (c CPUCost) CoresOver(wall time.Duration) float64 {
	if wall <= 0 {
		return 0
	}
	return c.CPUSeconds / wall.Seconds()
}

// ChildShare is the share of the CPU the descendants used.
func (c CPUCost) ChildShare() float64 {
	if c.CPUSeconds == 0 {
		return 0
	}
	return c.ChildCPUSeconds / c.CPUSeconds
}

// SteadyWindow is a controller's CPU over a window in which nothing
// changes: the apps re-sync at their period, nothing else happens.
type SteadyWindow struct {
	Window Duration `json:"window"`
	CPUCost
	// Cores is CPUSeconds over the window.
	Cores float64 `json:"cores"`
	// Profile is the path of the CPU profile taken over the window (in
	// the run's log directory); empty when the controller serves none.
	Profile string `json:"profile,omitempty"`
	// Parts splits the profile by the part of the controller that spent
	// it, largest first.
	Parts []ProfilePart `json:"profileParts,omitempty"`
}

// ProfilePart is the share of a CPU profile spent in one part of the
// controller.
type ProfilePart struct {
	Part    string  `json:"part"`
	Share   float64 `json:"share"`
	Seconds float64 `json:"seconds"`
}
