// Package scoring is the scoring context: the tenants' churn models, their
// customers' churn scores, and the predictive segments drawn from them
// (/v2). Customers and campaigns read the segments; reporting (insights)
// reads the scores beside everything else, from above.
package scoring

import (
	"github.com/fideliza/fideliza/app/audiences"
	"github.com/fideliza/fideliza/app/kernel"
)

// Service owns the operations of the scoring context.
type Service struct {
	k *kernel.Kernel // what every context shares: private, so the exported methods are the operations
	// Audiences are recomputed once a tenant is scored: churn risk and the
	// probability alive are facts their rules may name.
	Audiences *audiences.Service
}

// New is the context's service over k, the kernel every context shares;
// the composition root (app.New) sets the services it depends on.
func New(k *kernel.Kernel) *Service { return &Service{k: k} }
