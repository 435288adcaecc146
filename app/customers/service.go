// Package customers is the customers context: profiles, Consents, lookups
// by document, segments and customer imports.
package customers

import (
	"sync"

	"github.com/fideliza/fideliza/app/audiences"
	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/app/scoring"
	"github.com/fideliza/fideliza/ratelimit"
)

// Service owns the operations of the customers context.
type Service struct {
	k         *kernel.Kernel // what every context shares: private, so the exported methods are the operations
	Scoring   *scoring.Service
	Audiences *audiences.Service

	lookupsOnce sync.Once
	lookups     ratelimit.Counter
}

// New is the context's service over k, the kernel every context shares;
// the composition root (app.New) sets the services it depends on.
func New(k *kernel.Kernel) *Service { return &Service{k: k} }
