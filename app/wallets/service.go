// Package wallets is the wallets context: customers' money wallets
// (cashback in R$, exact cents; and the gift cards bound to them, which
// the gift cards context writes), their balances and statements, the
// cashback campaigns' credits in R$, and the wallets' upkeep (release
// after the pending period, expiry, notices). It alone writes the cashback
// wallets, through domain/wallet; the points ledger stays the loyalty
// context's.
package wallets

import (
	"github.com/fideliza/fideliza/app/giftcards"
	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/domain/wallet"
)

// Service owns the operations of the wallets context.
type Service struct {
	k *kernel.Kernel // what every context shares: private, so the exported methods are the operations

	GiftCards *giftcards.Service // the customer's bound cards, listed among its wallets
}

// wallets are the money wallets on the service's database and clock.
func (a *Service) wallets() wallet.Wallets {
	return wallet.Wallets{Dialect: a.k.DB.Dialect, Now: a.k.Now}
}

// New is the context's service over k, the kernel every context shares;
// the composition root (app.New) sets the services it depends on.
func New(k *kernel.Kernel) *Service { return &Service{k: k} }
