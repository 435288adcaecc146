package checkout

import (
	"context"

	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/ent"
)

// The GraphQL connections of the checkout context: a page of a table in the order and
// under the filter the schema's arguments give (entgql's, generated from
// the ent schema), the viewer's tenant's rows only (ent privacy).

// RedemptionConnection is a page of the redemptions (GraphQL's redemptions).
func (a *Service) RedemptionConnection(ctx context.Context, p kernel.Page, order *ent.RedemptionOrder, where *ent.RedemptionWhereInput) (*ent.RedemptionConnection, error) {
	if err := Rules.RedemptionConnection.Allow(ctx); err != nil {
		return nil, err
	}
	return a.k.DB.Ent.Redemption.Query().Paginate(ctx, p.After, p.First, p.Before, p.Last,
		ent.WithRedemptionOrder(order), ent.WithRedemptionFilter(where.Filter))
}
