// Package insights is the insights context: dashboards, the churn model and
// its scores, the predictive segments (/v2).
package insights

import (
	"github.com/fideliza/fideliza/app/audiences"
	"github.com/fideliza/fideliza/app/kernel"
)

// Service owns the operations of the insights context.
type Service struct {
	*kernel.Kernel
	// Audiences are recomputed once a tenant is scored: churn risk and the
	// probability alive are facts their rules may name.
	Audiences *audiences.Service
}
