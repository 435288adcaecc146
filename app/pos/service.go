// Package pos is the point of sale's context: a customer identified at the
// till, per-item discounts authorized, a sale registered (group-committed)
// and processed by a job (points, redemptions), and returns and
// cancellations undone.
package pos

import (
	"github.com/fideliza/fideliza/app/audiences"
	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/app/checkout"
	"github.com/fideliza/fideliza/app/giftcards"
	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/app/wallets"
	"github.com/fideliza/fideliza/jobs"
)

// Service owns the operations of the point of sale's context.
type Service struct {
	k         *kernel.Kernel // what every context shares: private, so the exported methods are the operations
	Checkout  *checkout.Service
	Campaigns *campaigns.Service
	Loyalty   *loyalty.Service
	Audiences *audiences.Service
	Wallets   *wallets.Service   // cashback paid at the till
	GiftCards *giftcards.Service // gift cards paid at the till

	saleGroups kernel.GroupCommit[*saleWrite]
	saleJobs   kernel.GroupCommit[*saleJob] // sales processed together (salegroups.go)
	fairSales  jobs.Fair                    // the sales queue's order across tenants
}

// New is the context's service over k, the kernel every context shares;
// the composition root (app.New) sets the services it depends on.
func New(k *kernel.Kernel) *Service { return &Service{k: k} }
