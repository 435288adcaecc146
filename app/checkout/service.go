// Package checkout is the online checkout's context: a cart validated
// against the live campaigns (a validation token promising each benefit)
// and a campaign redeemed on that promise, once per idempotency key.
package checkout

import (
	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/app/loyalty"
)

// Service owns the operations of the checkout context.
type Service struct {
	k         *kernel.Kernel // what every context shares: private, so the exported methods are the operations
	Campaigns *campaigns.Service
	Loyalty   *loyalty.Service
}

// New is the context's service over k, the kernel every context shares;
// the composition root (app.New) sets the services it depends on.
func New(k *kernel.Kernel) *Service { return &Service{k: k} }
