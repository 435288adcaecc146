package pos

import (
	"context"

	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/ent"
)

// The GraphQL connections of the point of sale's context: a page of a table in the order and
// under the filter the schema's arguments give (entgql's, generated from
// the ent schema), the viewer's tenant's rows only (ent privacy).

// SaleConnection is a page of the sales (GraphQL's sales).
func (a *Service) SaleConnection(ctx context.Context, p kernel.Page, order *ent.SaleOrder, where *ent.SaleWhereInput) (*ent.SaleConnection, error) {
	if err := Rules.SaleConnection.Allow(ctx); err != nil {
		return nil, err
	}
	return a.k.DB.Ent.Sale.Query().Paginate(ctx, p.After, p.First, p.Before, p.Last,
		ent.WithSaleOrder(order), ent.WithSaleFilter(where.Filter))
}
