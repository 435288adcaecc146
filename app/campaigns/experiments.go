package campaigns

import (
	"context"

	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/experiment"
	"github.com/fideliza/fideliza/ent"
)

// HoldsOut tells whether campaign c holds the customer of customerID out
// of its benefit, as its control group: the side every channel's
// eligibility sees (experiment.HeldOut), whether or not the customer is in
// the campaign's target. It reads nothing.
func (a *Service) HoldsOut(ctx context.Context, c *ent.Campaign, customerID string) (bool, error) {
	if err := Rules.HoldsOut.Allow(ctx); err != nil {
		return false, err
	}
	if err := kernel.Guarded("customer_id", customerID); err != nil {
		return false, err
	}
	var p apperr.Problems
	kernel.RequireID(&p, "customer_id", customerID)
	if err := p.Err(); err != nil {
		return false, err
	}
	return experiment.HeldOut(customerID, c.ID, c.HoldoutBasisPoints), nil
}
