// Package campaigns is the campaigns context: campaign definitions, coupons,
// the product catalogue and budgets.
package campaigns

import (
	"sync"

	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/ratelimit"
)

// Service owns the operations of the campaigns context.
type Service struct {
	k *kernel.Kernel // what every context shares: private, so the exported methods are the operations

	guessesOnce sync.Once
	guesses     ratelimit.Counter
	// products is the catalogue as this process remembers it (catalogue).
	catalogueOnce sync.Once
	products      *expirable.LRU[string, productFacts]
}

// New is the context's service over k, the kernel every context shares;
// the composition root (app.New) sets the services it depends on.
func New(k *kernel.Kernel) *Service { return &Service{k: k} }
