package customers

import (
	"context"

	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/ent"
)

// The GraphQL connections of the customers context: a page of a table in the order and
// under the filter the schema's arguments give (entgql's, generated from
// the ent schema), the viewer's tenant's rows only (ent privacy).

// CustomerConnection is a page of the customers (GraphQL's customers).
func (a *Service) CustomerConnection(ctx context.Context, p kernel.Page, order *ent.CustomerOrder, where *ent.CustomerWhereInput) (*ent.CustomerConnection, error) {
	if err := Rules.CustomerConnection.Allow(ctx); err != nil {
		return nil, err
	}
	return a.k.DB.Ent.Customer.Query().Paginate(ctx, p.After, p.First, p.Before, p.Last,
		ent.WithCustomerOrder(order), ent.WithCustomerFilter(where.Filter))
}

// SegmentConnection is a page of the segments (GraphQL's segments).
func (a *Service) SegmentConnection(ctx context.Context, p kernel.Page, order *ent.SegmentOrder, where *ent.SegmentWhereInput) (*ent.SegmentConnection, error) {
	if err := Rules.SegmentConnection.Allow(ctx); err != nil {
		return nil, err
	}
	return a.k.DB.Ent.Segment.Query().Paginate(ctx, p.After, p.First, p.Before, p.Last,
		ent.WithSegmentOrder(order), ent.WithSegmentFilter(where.Filter))
}
