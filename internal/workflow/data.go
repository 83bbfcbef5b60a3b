package workflow

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"cuelang.org/go/cue/parser"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cueeval"
)

// MaxExpression bounds a step's if and an output's valueFrom, in bytes:
// KubeVela's are a line long, and a bound keeps even parsing them cheap.
const MaxExpression = 4096

// Input fills a value another step exported (From names the output) into
// the step's properties at ParameterKey, as KubeVela's step inputs do.
type Input struct {
	From         string `json:"from"`
	ParameterKey string `json:"parameterKey"`
}

// Output exports a value of the step's objects under Name, once the step
// has succeeded: ValueFrom is a CUE expression over output (the step's
// workload, or its object, as it is live in the cluster, status included)
// and outputs.<name> (an apply-component step's other objects).
type Output struct {
	Name      string `json:"name"`
	ValueFrom string `json:"valueFrom"`
}

// Data is what a run passes between its steps: the values its steps
// exported so far, and which steps taking inputs have their objects
// recorded with those values (the controller renders them again when a
// value arrives, and records them before they are applied).
type Data struct {
	// Values are the exported values by output name, as JSON.
	Values map[string]json.RawMessage
	// Rendered are the steps with inputs whose recorded objects were
	// rendered with the values Values holds for them.
	Rendered map[string]bool
	// Blocked, when set, says why the steps not rendered cannot be: it
	// is their message while they wait.
	Blocked string
}

// passesData reports whether a step type takes inputs and exports
// outputs: apply-component and apply-object steps, whose objects are
// rendered with the values and read for them.
func passesData(typ string) bool {
	return !Native(typ) || typ == v1beta1.WorkflowStepTypeApplyComponent || typ == v1beta1.WorkflowStepTypeApplyObject
}

// TakesInputs reports whether a step of the flow takes inputs.
func (f Flow) TakesInputs() bool {
	for s := range f.All() {
		// A custom step takes its inputs when it runs: nothing of it is
		// rendered with them.
		if len(s.Inputs) > 0 && !s.Custom {
			return true
		}
	}
	return false
}

// producer names the step exporting an output.
func (f Flow) producer(output string) string {
	name := ""
	f.each(func(s, _ *Step) {
		for _, o := range s.Outputs {
			if o.Name == output {
				name = s.Name
			}
		}
	})
	return name
}

// InputValues returns the values a step takes, by output name, when all
// of them are in values; false when one is missing.
func (s Step) InputValues(values map[string]json.RawMessage) (map[string]json.RawMessage, bool) {
	out := make(map[string]json.RawMessage, len(s.Inputs))
	for _, in := range s.Inputs {
		v, ok := values[in.From]
		if !ok {
			return nil, false
		}
		out[in.From] = v
	}
	return out, true
}

// RenderedWith returns how a step's inputs are recorded with its objects:
// a digest of the values it takes (canonical JSON, sorted keys), short
// whatever their size.
func RenderedWith(values map[string]json.RawMessage) string { return digest(values) }

// SpecDigest is a digest of an Application's spec: a version is rendered
// again for its steps' values only from the spec it was rendered from.
func SpecDigest(app *v1beta1.Application) string { return digest(app.Spec) }

// digest is a short digest of v's canonical JSON (sorted keys).
func digest(v any) string {
	raw, _ := json.Marshal(v)
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:12])
}

// checkData checks a flow's inputs and outputs: only apply-component and
// apply-object steps pass data; output names are used once; a valueFrom
// parses as a CUE expression; a parameterKey is a path into the
// properties the step renders from (properties.<path> of the component
// for apply-component, value.<path> of the object for apply-object); an
// input names an output of another step that runs before it. In DAG mode
// a step waits for the steps whose outputs it takes, as KubeVela's steps
// wait for their inputs: that dependency is added to its dependsOn (or
// its group's, across levels). In StepByStep mode the exporting step must
// come first.
func checkData(f *Flow) error {
	type where struct{ top, sub int }
	producer := map[string]where{}
	var err error
	visit := func(fn func(s *Step, w where)) {
		for i := range f.Steps {
			fn(&f.Steps[i], where{i, -1})
			for j := range f.Steps[i].Sub {
				fn(&f.Steps[i].Sub[j], where{i, j})
			}
		}
	}
	visit(func(s *Step, w where) {
		if err != nil || len(s.Inputs)+len(s.Outputs) == 0 {
			return
		}
		if !passesData(s.Type) {
			err = fmt.Errorf("step %q: inputs and outputs on a %s step: Steward passes values into and out of apply-component and apply-object steps", s.Name, s.Type)
			return
		}
		for _, o := range s.Outputs {
			if o.Name == "" || o.ValueFrom == "" {
				err = fmt.Errorf("step %q: an output needs name and valueFrom", s.Name)
				return
			}
			if _, dup := producer[o.Name]; dup {
				err = fmt.Errorf("step %q: output %q is exported by another step too", s.Name, o.Name)
				return
			}
			if len(o.ValueFrom) > MaxExpression {
				err = fmt.Errorf("step %q: output %q: valueFrom is %d bytes, more than the %d an expression may have", s.Name, o.Name, len(o.ValueFrom), MaxExpression)
				return
			}
			// Parsing alone is linear in a text this short; evaluating it
			// happens in the evaluator, within its budget.
			if _, perr := parser.ParseExpr("valueFrom", o.ValueFrom); perr != nil {
				err = fmt.Errorf("step %q: output %q: valueFrom %q is not a CUE expression: %v", s.Name, o.Name, o.ValueFrom, perr)
				return
			}
			producer[o.Name] = w
		}
		for _, in := range s.Inputs {
			if perr := checkParameterKey(s.Type, in.ParameterKey); perr != nil {
				err = fmt.Errorf("step %q: input from %q: %v", s.Name, in.From, perr)
				return
			}
		}
	})
	if err != nil {
		return err
	}
	visit(func(s *Step, c where) {
		for _, in := range s.Inputs {
			if err != nil {
				return
			}
			p, ok := producer[in.From]
			switch {
			case !ok:
				err = fmt.Errorf("step %q: input from %q: no step exports an output of that name", s.Name, in.From)
			case p == c:
				err = fmt.Errorf("step %q: input from %q: the step exports it itself", s.Name, in.From)
			case p.top == c.top:
				// Sub-steps of one group.
				err = waitFor(&f.Steps[c.top].Sub[c.sub], f.Steps[c.top].Sub, p.sub, c.sub, !f.SubStepByStep, in.From)
			default:
				err = waitFor(&f.Steps[c.top], f.Steps, p.top, c.top, f.DAG, in.From)
			}
		}
	})
	return err
}

// waitFor makes the step at c of a level wait for the step at p, whose
// output it takes: in DAG mode by depending on it, one by one by coming
// after it.
func waitFor(s *Step, level []Step, p, c int, dag bool, output string) error {
	name := level[p].Name
	if !dag {
		if p > c {
			return fmt.Errorf("step %q: input from %q: step %q exports it and runs after it in StepByStep mode", level[c].Name, output, name)
		}
		return nil
	}
	if !slices.Contains(s.DependsOn, name) {
		s.DependsOn = append(s.DependsOn, name)
	}
	return nil
}

// checkParameterKey checks where an input goes: a path under properties
// (apply-component: the component's properties) or under value
// (apply-object: the object).
func checkParameterKey(typ, key string) error {
	if key == "" {
		// The value is read by the step's if alone, as KubeVela allows.
		return nil
	}
	if !Native(typ) {
		// A custom step's parameterKey is a path into its parameter.
		_, err := ParsePath(key)
		return err
	}
	root := "properties"
	if typ == v1beta1.WorkflowStepTypeApplyObject {
		root = "value"
	}
	path, err := ParsePath(key)
	if err != nil {
		return err
	}
	if len(path) < 2 || path[0].Key != root || path[0].Index >= 0 {
		return fmt.Errorf("parameterKey %q: want a path under %s (like %s.a.b[0].c)", key, root, root)
	}
	return nil
}

// PathElem is one element of a parameterKey: a field (Key, Index -1) or
// a list index.
type PathElem struct {
	Key   string
	Index int
}

// ParsePath reads a parameterKey: fields separated by dots, list indexes
// in brackets, and fields in brackets and quotes for names with dots
// (a.b[0]["c.d"]).
func ParsePath(key string) ([]PathElem, error) {
	bad := func(why string) ([]PathElem, error) {
		return nil, fmt.Errorf("parameterKey %q: %s", key, why)
	}
	var out []PathElem
	rest := key
	for rest != "" {
		switch {
		case rest[0] == '[':
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return bad("a [ without ]")
			}
			inner := rest[1:end]
			if strings.HasPrefix(inner, `"`) {
				name, err := strconv.Unquote(inner)
				if err != nil || name == "" {
					return bad("a field in brackets must be a quoted name")
				}
				out = append(out, PathElem{Key: name, Index: -1})
			} else {
				n, err := strconv.Atoi(inner)
				if err != nil || n < 0 {
					return bad("a list index must be a number from 0")
				}
				out = append(out, PathElem{Index: n})
			}
			rest = rest[end+1:]
		case rest[0] == '.':
			if len(out) == 0 || len(rest) == 1 || rest[1] == '.' || rest[1] == '[' {
				return bad("an empty field name")
			}
			rest = rest[1:]
		default:
			if len(out) > 0 && key[len(key)-len(rest)-1] != '.' {
				return bad("fields are separated by dots")
			}
			end := strings.IndexAny(rest, ".[")
			if end < 0 {
				end = len(rest)
			}
			out = append(out, PathElem{Key: rest[:end], Index: -1})
			rest = rest[end:]
		}
	}
	if len(out) == 0 {
		return bad("empty")
	}
	return out, nil
}

// SetPath sets value at path in obj, making the maps and lists on the
// way (a list grows to the index, with empty objects).
func SetPath(obj map[string]any, path []PathElem, value any) error {
	var cur any = obj
	for i, el := range path {
		last := i == len(path)-1
		var next any
		if !last {
			if path[i+1].Index >= 0 {
				next = []any{}
			} else {
				next = map[string]any{}
			}
		}
		switch c := cur.(type) {
		case map[string]any:
			if el.Index >= 0 {
				return fmt.Errorf("[%d]: not a list", el.Index)
			}
			if last {
				c[el.Key] = value
				return nil
			}
			if existing, ok := c[el.Key]; ok && existing != nil {
				next = existing
			}
			if l, ok := next.([]any); ok && path[i+1].Index >= len(l) {
				next = grow(l, path[i+1].Index)
			}
			c[el.Key] = next
			cur = next
		case []any:
			if el.Index < 0 {
				return fmt.Errorf("%s: not an object", el.Key)
			}
			if last {
				c[el.Index] = value
				return nil
			}
			if existing := c[el.Index]; existing != nil {
				// An empty object is a placeholder grow left: a list may
				// take its place.
				if m, isMap := existing.(map[string]any); !isMap || len(m) > 0 || path[i+1].Index < 0 {
					next = existing
				}
			}
			if l, ok := next.([]any); ok && path[i+1].Index >= len(l) {
				next = grow(l, path[i+1].Index)
			}
			c[el.Index] = next
			cur = next
		default:
			return fmt.Errorf("%s: not an object or list", describe(path[:i]))
		}
	}
	return nil
}

// grow returns l long enough for index i, new elements empty objects.
func grow(l []any, i int) []any {
	for len(l) <= i {
		l = append(l, map[string]any{})
	}
	return l
}

func describe(path []PathElem) string {
	var b strings.Builder
	for _, el := range path {
		if el.Index >= 0 {
			fmt.Fprintf(&b, "[%d]", el.Index)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(el.Key)
	}
	return b.String()
}

// Fill sets each of a step's inputs into props (the step's properties
// root: the component's spec with properties, or the apply-object step's
// properties with value) from values.
func (s Step) Fill(props map[string]any, values map[string]json.RawMessage) error {
	for _, in := range s.Inputs {
		raw, ok := values[in.From]
		if !ok {
			return fmt.Errorf("step %q: input from %q: no value exported yet", s.Name, in.From)
		}
		if in.ParameterKey == "" {
			// Read by the step's if only.
			continue
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return fmt.Errorf("step %q: input from %q: %w", s.Name, in.From, err)
		}
		path, err := ParsePath(in.ParameterKey)
		if err != nil {
			return err
		}
		if err := SetPath(props, path, v); err != nil {
			return fmt.Errorf("step %q: input from %q into %s: %w", s.Name, in.From, in.ParameterKey, err)
		}
	}
	return nil
}

// CustomParams returns a custom step's parameter: its properties with
// its inputs set at their parameterKey, a path into the parameter.
func (s Step) CustomParams(values map[string]json.RawMessage) (json.RawMessage, error) {
	props := map[string]any{}
	if len(s.Properties) > 0 && string(s.Properties) != "null" {
		if err := json.Unmarshal(s.Properties, &props); err != nil {
			return nil, fmt.Errorf("step %q: properties: %w", s.Name, err)
		}
	}
	if err := s.Fill(props, values); err != nil {
		return nil, err
	}
	return json.Marshal(props)
}

// Export evaluates a step's outputs over scope (output, outputs) with
// ev and returns their values as JSON; an expression that does not
// evaluate to a concrete value (a field not there yet, such as a status
// the object has not reported) is an error naming the output. An
// evaluation stopped by its budget is the evaluator's
// *cueeval.BudgetError.
func (s Step) Export(ev cueeval.Evaluator, scope map[string]any) (map[string]json.RawMessage, error) {
	if len(s.Outputs) == 0 {
		return nil, nil
	}
	raw, err := json.Marshal(scope)
	if err != nil {
		return nil, err
	}
	exprs := make([]string, len(s.Outputs))
	for i, o := range s.Outputs {
		exprs[i] = o.ValueFrom
	}
	res, err := ev.Evaluate(&cueeval.Request{Values: &cueeval.Expressions{Exprs: exprs, Scope: raw,
		What: fmt.Sprintf("the outputs of workflow step %q", s.Name)}})
	if err != nil {
		return nil, err
	}
	if len(res.Results) != len(exprs) {
		return nil, fmt.Errorf("evaluating the outputs of step %q: %d values for %d outputs", s.Name, len(res.Results), len(exprs))
	}
	out := make(map[string]json.RawMessage, len(s.Outputs))
	for i, o := range s.Outputs {
		if r := res.Results[i]; r.Err != "" {
			return nil, fmt.Errorf("output %q (%s): %s", o.Name, o.ValueFrom, r.Err)
		}
		out[o.Name] = res.Results[i].Value
	}
	return out, nil
}

// parseData reads a step's inputs and outputs.
func parseData(s v1beta1.WorkflowStepBase, step *Step) {
	for _, in := range s.Inputs {
		step.Inputs = append(step.Inputs, Input{From: in.From, ParameterKey: in.ParameterKey})
	}
	for _, o := range s.Outputs {
		step.Outputs = append(step.Outputs, Output{Name: o.Name, ValueFrom: o.ValueFrom})
	}
}

// inputsReady reports whether a step taking inputs may start: every
// value it takes was exported (valuesReady) and its objects were
// rendered with them.
func (r *Run) inputsReady(s *Step, ss *v1beta1.StepStatus) bool {
	if !r.valuesReady(s, ss) {
		return false
	}
	if !s.Custom && !r.data.Rendered[s.Name] {
		ss.Message = renderMessage
		if r.data.Blocked != "" {
			ss.Message = r.data.Blocked
		} else {
			r.renderWanted = true
		}
		return r.waitTimeout(s, ss)
	}
	if ss.Message == renderMessage || ss.Message == r.data.Blocked {
		ss.Message = ""
	}
	return true
}

// valuesReady reports whether every value a step takes was exported. A
// value never exported (the step exporting it failed or was skipped, and
// this one runs anyway: if: always, or an if of its own) fails the step;
// one whose step was skipped skips it.
func (r *Run) valuesReady(s *Step, ss *v1beta1.StepStatus) bool {
	t := metav1.NewTime(r.now)
	for _, in := range s.Inputs {
		if _, ok := r.data.Values[in.From]; ok {
			continue
		}
		producer := r.flow.producer(in.From)
		switch ps := r.status[producer]; {
		case ps != nil && ps.Phase == v1beta1.WorkflowStepSkipped:
			// Its value was never to be exported: the step taking it is
			// skipped with it.
			r.skip(s, ss)
			ss.Message = fmt.Sprintf("input from %q: step %q, which exports it, was skipped", in.From, producer)
			return false
		case ps != nil && ps.Phase == v1beta1.WorkflowStepSucceeded:
			// Exported, and not read back yet (a cache behind the write):
			// the next pass reads it.
			ss.Message = fmt.Sprintf(valueMessage+"%q, which step %q exported", in.From, producer)
			r.wake(time.Second)
			return r.waitTimeout(s, ss)
		}
		ss.Phase, ss.Reason, ss.FirstExecuteTime, ss.LastExecuteTime = v1beta1.WorkflowStepFailed, v1beta1.WorkflowStepReasonInputMissing, t, t
		ss.Message = fmt.Sprintf("input from %q: step %q, which exports it, did not succeed", in.From, producer)
		return false
	}
	if strings.HasPrefix(ss.Message, valueMessage) {
		// The values came: the step no longer waits for them.
		ss.Message = ""
	}
	return true
}

// valueMessage begins the message of a step waiting for a value that was
// exported and not read back yet.
const valueMessage = "waiting for the value of "

// inputValues returns the values the step takes that were exported, by
// the output they come from: what its if reads as inputs.
func (r *Run) inputValues(s *Step) map[string]json.RawMessage {
	if len(s.Inputs) == 0 {
		return nil
	}
	out := make(map[string]json.RawMessage, len(s.Inputs))
	for _, in := range s.Inputs {
		if v, ok := r.data.Values[in.From]; ok {
			out[in.From] = v
		}
	}
	return out
}

// renderMessage is the message of a step waiting for its objects to be
// rendered with the values it takes.
const renderMessage = "waiting for its objects to be rendered with its inputs"

// Export records values a step exported in this pass: the steps taking
// them may start.
func (r *Run) Export(values map[string]json.RawMessage) {
	for k, v := range values {
		r.data.Values[k] = v
	}
}

// Values returns the values the run's steps exported so far.
func (r *Run) Values() map[string]json.RawMessage {
	if r == nil {
		return nil
	}
	return r.data.Values
}
