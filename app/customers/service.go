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
	*kernel.Kernel
	Scoring   *scoring.Service
	Audiences *audiences.Service

	lookupsOnce sync.Once
	lookups     ratelimit.Counter
}
