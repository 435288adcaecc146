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
	*kernel.Kernel
	Campaigns *campaigns.Service
	Loyalty   *loyalty.Service
}
