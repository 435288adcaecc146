// Package loyalty is the loyalty context: the points ledger's operations
// (credit, debit, adjustment, reversal), balances, statements, levels and
// the points liability.
package loyalty

import (
	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/app/kernel"
)

// Service owns the operations of the loyalty context.
type Service struct {
	*kernel.Kernel
	Campaigns *campaigns.Service
}
