package delivery

import (
	"fmt"

	"github.com/steward-oam/steward/internal/cluster"
	"github.com/steward-oam/steward/internal/placement"
	"github.com/steward-oam/steward/internal/render"
	"github.com/steward-oam/steward/internal/sandbox"
)

// NewRenderer returns a Renderer whose every CUE evaluation runs in a pool
// of evaluator processes bounded by b, and whose renders are held to b's
// object limits: what the controller and `steward render` render with.
// The caller closes the pool (or adds it to its manager).
func NewRenderer(b sandbox.Budget, observer sandbox.Observer, opts ...render.Option) (*render.Renderer, *sandbox.Pool, error) {
	po := b.PoolOptions()
	po.Observer = observer
	pool, err := sandbox.New(po)
	if err != nil {
		return nil, nil, err
	}
	limits := render.Limits{
		Objects: b.Objects, ObjectBytes: int(b.ObjectSize.Value()), TotalBytes: int(b.RenderSize.Value()),
		// Many evaluations, each under the timeout, hold a reconcile for
		// their sum: one version's renders together get three timeouts.
		Time:        renderTimeouts * b.Timeout,
		ObjectsFlag: "--" + sandbox.FlagObjects, ObjectBytesFlag: "--" + sandbox.FlagObjectSize, TotalBytesFlag: "--" + sandbox.FlagRenderSize,
		TimeFlag: fmt.Sprintf("%d × --%s", renderTimeouts, sandbox.FlagTimeout),
	}
	opts = append([]render.Option{render.WithEvaluator(pool), render.WithLimits(limits)}, opts...)
	return render.NewRenderer(opts...), pool, nil
}

// renderTimeouts is how many evaluation timeouts one version's renders
// may take together.
const renderTimeouts = 3

// Placeable is the registered clusters as placement chooses from them:
// their names and labels.
func Placeable(clusters []cluster.Cluster) []placement.Cluster {
	out := make([]placement.Cluster, len(clusters))
	for i, c := range clusters {
		out[i] = placement.Cluster{Name: c.Name, Labels: c.Labels}
	}
	return out
}
