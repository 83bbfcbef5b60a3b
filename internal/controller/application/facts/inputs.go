package facts

// RenderedInputs is tracker.AnnotationWorkflowInputs: a digest of the spec the
// version was rendered from and, for each step taking inputs that was
// rendered, a digest of its values (workflow.RenderedWith).
type RenderedInputs struct {
	Spec  string            `json:"spec"`
	Steps map[string]string `json:"steps,omitempty"`
}
