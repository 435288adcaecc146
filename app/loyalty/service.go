// Package loyalty is the loyalty context: the points ledger's operations
// (credit, debit, adjustment, reversal), balances, statements, levels and
// the points liability. It alone writes the ledger: the other contexts move
// points through its operations, the point of sale's inside its own
// transactions (tillpoints.go).
package loyalty

import (
	"context"

	"github.com/fideliza/fideliza/app/audiences"
	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/app/wallets"
	"github.com/fideliza/fideliza/domain/ledger"
	"github.com/fideliza/fideliza/storage"
)

// Service owns the operations of the loyalty context.
type Service struct {
	k         *kernel.Kernel // what every context shares: private, so the exported methods are the operations
	Campaigns *campaigns.Service
	Audiences *audiences.Service
	Wallets   *wallets.Service // the cashback wallet, for programmes whose cashback stays in R$
}

// pointsTx runs fn in a transaction that moves customerID's points, then
// refreshes the customer's audiences in it: a balance, and the level it
// may move, are facts a rule can name, current when the move commits.
func (a *Service) pointsTx(ctx context.Context, customerID string, fn func(tx storage.Tx) error) error {
	return a.k.DB.InTx(ctx, func(tx storage.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		return a.Audiences.Refresh(ctx, tx, customerID)
	})
}

// ledger is the points ledger on the service's database and clock.
func (a *Service) ledger() ledger.Ledger {
	return ledger.Ledger{Dialect: a.k.DB.Dialect, Now: a.k.Now}
}

// New is the context's service over k, the kernel every context shares;
// the composition root (app.New) sets the services it depends on.
func New(k *kernel.Kernel) *Service { return &Service{k: k} }
