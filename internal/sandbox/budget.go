package sandbox

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/steward-oam/steward/internal/cueeval"
)

// Flag names of the budget, shared by `steward controller` and `steward
// render`.
const (
	FlagTimeout        = "cue-eval-timeout"
	FlagMemory         = "cue-eval-memory-limit"
	FlagEvaluators     = "cue-evaluators"
	FlagObjects        = "max-render-objects"
	FlagObjectSize     = "max-render-object-size"
	FlagRenderSize     = "max-render-size"
	defaultObjects     = 5000
	defaultObjectBytes = 1536 << 10
	defaultRenderBytes = 16 << 20
)

// Budget is what one CUE evaluation, and one render, may cost: the
// settings behind the flags above. A definition that needs more fails
// its Application with reason EvaluationBudgetExceeded; nothing else is
// affected.
type Budget struct {
	// Timeout bounds one evaluation's wall time.
	Timeout time.Duration
	// Memory bounds one evaluator process's heap.
	Memory resource.Quantity
	// Evaluators is how many evaluator processes run at most.
	Evaluators int
	// Objects, ObjectSize and RenderSize bound what one Application
	// renders, all its components and clusters together: the number of
	// objects, the JSON size of one object and of all of them.
	Objects    int
	ObjectSize resource.Quantity
	RenderSize resource.Quantity
}

// DefaultBudget never trips on KubeVela's published definitions, nor on
// Applications of a few thousand objects: a render is milliseconds and
// megabytes. An object over 1.5 MiB cannot be stored by etcd anyway.
func DefaultBudget() Budget {
	d := Defaults()
	return Budget{
		Timeout:    d.Timeout,
		Memory:     *resource.NewQuantity(d.Memory, resource.BinarySI),
		Evaluators: d.Evaluators,
		Objects:    defaultObjects,
		ObjectSize: *resource.NewQuantity(defaultObjectBytes, resource.BinarySI),
		RenderSize: *resource.NewQuantity(defaultRenderBytes, resource.BinarySI),
	}
}

// BindFlags registers the budget's flags.
func (b *Budget) BindFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&b.Timeout, FlagTimeout, b.Timeout, "Longest one CUE evaluation (a definition's template, health policy, custom status or details, or a workflow expression) may take; an evaluation still running then is stopped and its Application fails with reason EvaluationBudgetExceeded.")
	fs.Var(quantityValue{&b.Memory}, FlagMemory, "Most memory one CUE evaluator process may use (heap; its address space is bounded to this plus what it reserved at start plus 256Mi). An evaluation that needs more is stopped and its Application fails with reason EvaluationBudgetExceeded.")
	fs.IntVar(&b.Evaluators, FlagEvaluators, b.Evaluators, "CUE evaluator processes: evaluations run in child processes, this many at once, so that no definition can take the controller's memory or time.")
	fs.IntVar(&b.Objects, FlagObjects, b.Objects, "Most objects one Application may render, all its components and clusters together.")
	fs.Var(quantityValue{&b.ObjectSize}, FlagObjectSize, "Largest one rendered object may be, as JSON.")
	fs.Var(quantityValue{&b.RenderSize}, FlagRenderSize, "Most all objects one Application renders may add up to, as JSON: what its resource tracker records.")
}

// Validate reports a budget that cannot work.
func (b Budget) Validate() error {
	switch {
	case b.Timeout <= 0:
		return fmt.Errorf("--%s %s: want more than 0", FlagTimeout, b.Timeout)
	case b.Memory.Value() < 64<<20:
		return fmt.Errorf("--%s %s: want at least 64Mi, which an evaluator needs to start", FlagMemory, b.Memory.String())
	case b.Evaluators < 1:
		return fmt.Errorf("--%s %d: want at least 1", FlagEvaluators, b.Evaluators)
	case b.Objects < 1:
		return fmt.Errorf("--%s %d: want at least 1", FlagObjects, b.Objects)
	case b.ObjectSize.Value() < 1<<10:
		return fmt.Errorf("--%s %s: want at least 1Ki", FlagObjectSize, b.ObjectSize.String())
	case b.RenderSize.Value() < b.ObjectSize.Value():
		return fmt.Errorf("--%s %s: want at least --%s (%s)", FlagRenderSize, b.RenderSize.String(), FlagObjectSize, b.ObjectSize.String())
	}
	return nil
}

// PoolOptions are the pool's options for this budget.
func (b Budget) PoolOptions() Options {
	o := Defaults()
	o.Evaluators = b.Evaluators
	o.Timeout = b.Timeout
	o.Memory = b.Memory.Value()
	o.ObjectBytes = int(b.ObjectSize.Value())
	// One evaluation's result is bounded by the whole render's size, plus
	// room for the encoding.
	o.RenderBytes = int(b.RenderSize.Value())
	o.ResponseBytes = o.RenderBytes + 1<<20
	o.Flags = map[cueeval.Limit]string{
		cueeval.LimitTime:        "--" + FlagTimeout,
		cueeval.LimitMemory:      "--" + FlagMemory,
		cueeval.LimitObjectBytes: "--" + FlagObjectSize,
		cueeval.LimitRenderBytes: "--" + FlagRenderSize,
	}
	return o
}

// QuantityValue is a flag value of a size, written as a
// resource.Quantity (512Mi, 1536Ki), for other packages' size flags.
func QuantityValue(q *resource.Quantity) pflag.Value { return quantityValue{q} }

// quantityValue is a pflag.Value of a resource.Quantity: 512Mi, 1536Ki.
type quantityValue struct{ q *resource.Quantity }

func (v quantityValue) String() string {
	if v.q == nil {
		return ""
	}
	c := *v.q // String caches its text in the Quantity: not in the option
	return c.String()
}

func (v quantityValue) Set(s string) error {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return err
	}
	if q.Sign() < 0 {
		return fmt.Errorf("%s: want a size of 0 or more", s)
	}
	// A size in bytes, without the text ParseQuantity caches, so that an
	// option set by flag equals the same option set in code.
	*v.q = *resource.NewQuantity(q.Value(), q.Format)
	return nil
}

func (quantityValue) Type() string { return "quantity" }
