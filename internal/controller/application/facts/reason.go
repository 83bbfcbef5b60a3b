package facts

import (
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/apply"
	"github.com/steward-oam/steward/internal/boundary"
	"github.com/steward-oam/steward/internal/egress"
	"github.com/steward-oam/steward/internal/helm/release"
	"github.com/steward-oam/steward/internal/render"
	"k8s.io/apimachinery/pkg/api/meta"
)

// ReasonError carries the condition reason of an error that is not a
// render error.
type ReasonError struct {
	Reason string
	Err    error
}

func (e *ReasonError) Error() string { return e.Err.Error() }

func (e *ReasonError) Unwrap() error { return e.Err }

// ReasonOf returns the condition reason carried by err, or fallback.
func ReasonOf(err error, fallback string) string {
	var re *render.Error
	if errors.As(err, &re) && re.Reason != "" {
		return re.Reason
	}
	var oe *ReasonError
	if errors.As(err, &oe) {
		return oe.Reason
	}
	if be := boundary.As(err); be != nil {
		return be.Reason
	}
	if egress.IsDenied(err) {
		return egress.Reason
	}
	if errors.Is(err, release.ErrForeignRelease) {
		return v1beta1.ReasonOwnershipConflict
	}
	return fallback
}

// ApplyReason names the reason of a failed apply.
func ApplyReason(err error) string {
	switch {
	case meta.IsNoMatchError(err):
		return v1beta1.ReasonKindNotFound
	case errors.Is(err, apply.ErrNotOwned):
		return v1beta1.ReasonOwnershipConflict
	case apierrors.IsForbidden(err):
		return v1beta1.ReasonForbidden
	default:
		return v1beta1.ReasonApplyFailed
	}
}

// BudgetLimit names the limit a render hit, for the metric of renders
// refused after evaluation (evaluations count their own).
func BudgetLimit(err error) string {
	var le *render.LimitError
	if errors.As(err, &le) {
		return string(le.Limit)
	}
	return ""
}
