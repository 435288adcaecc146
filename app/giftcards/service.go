// Package giftcards is the gift cards context: cards of R$ stored value
// issued one at a time or in batches, loaded, bound to a customer, moved
// to another card, cancelled, looked up by code under a per-client quota
// of guesses, and their upkeep (expiry and its notice). It alone writes
// the cards, through domain/giftcard; spending them at the till and online
// goes through that package's Activate, Debit and Refund inside the
// spending context's own transaction.
package giftcards

import (
	"sync"

	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/domain/giftcard"
	"github.com/fideliza/fideliza/ratelimit"
)

// Service owns the operations of the gift cards context.
type Service struct {
	k *kernel.Kernel // what every context shares: private, so the exported methods are the operations

	guessesOnce sync.Once
	guesses     ratelimit.Counter
}

// New is the context's service over k, the kernel every context shares.
func New(k *kernel.Kernel) *Service { return &Service{k: k} }

// cards are the gift cards on the service's database and clock.
func (a *Service) cards() giftcard.Cards {
	return giftcard.Cards{Dialect: a.k.DB.Dialect, Now: a.k.Now}
}
