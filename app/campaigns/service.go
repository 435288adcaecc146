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
	*kernel.Kernel

	guessesOnce sync.Once
	guesses     ratelimit.Counter
	// products is the catalogue as this process remembers it (catalogue).
	catalogueOnce sync.Once
	products      *expirable.LRU[string, productFacts]
}
