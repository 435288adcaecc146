// Package insights is the insights context: dashboards, the churn model and
// its scores, the predictive segments (/v2).
package insights

import "github.com/fideliza/fideliza/app/kernel"

// Service owns the operations of the insights context.
type Service struct {
	*kernel.Kernel
}
