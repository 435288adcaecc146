package loyalty

import (
	"context"

	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/ent"
)

// The GraphQL connections of the loyalty context: a page of a table in the order and
// under the filter the schema's arguments give (entgql's, generated from
// the ent schema), the viewer's tenant's rows only (ent privacy).

// PointsEntryConnection is a page of the points ledger's entries (GraphQL's pointsEntries).
func (a *Service) PointsEntryConnection(ctx context.Context, p kernel.Page, order *ent.PointsEntryOrder, where *ent.PointsEntryWhereInput) (*ent.PointsEntryConnection, error) {
	if err := Rules.PointsEntryConnection.Allow(ctx); err != nil {
		return nil, err
	}
	return a.k.DB.Ent.PointsEntry.Query().Paginate(ctx, p.After, p.First, p.Before, p.Last,
		ent.WithPointsEntryOrder(order), ent.WithPointsEntryFilter(where.Filter))
}
