package campaigns

import (
	"context"

	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/ent"
)

// The GraphQL connections of the campaigns context: a page of a table in the order and
// under the filter the schema's arguments give (entgql's, generated from
// the ent schema), the viewer's tenant's rows only (ent privacy).

// CampaignConnection is a page of the campaigns (GraphQL's campaigns).
func (a *Service) CampaignConnection(ctx context.Context, p kernel.Page, order *ent.CampaignOrder, where *ent.CampaignWhereInput) (*ent.CampaignConnection, error) {
	if err := Rules.CampaignConnection.Allow(ctx); err != nil {
		return nil, err
	}
	return a.k.DB.Ent.Campaign.Query().Paginate(ctx, p.After, p.First, p.Before, p.Last,
		ent.WithCampaignOrder(order), ent.WithCampaignFilter(where.Filter))
}

// ProductConnection is a page of the catalogue's products (GraphQL's products).
func (a *Service) ProductConnection(ctx context.Context, p kernel.Page, order *ent.ProductOrder, where *ent.ProductWhereInput) (*ent.ProductConnection, error) {
	if err := Rules.ProductConnection.Allow(ctx); err != nil {
		return nil, err
	}
	return a.k.DB.Ent.Product.Query().Paginate(ctx, p.After, p.First, p.Before, p.Last,
		ent.WithProductOrder(order), ent.WithProductFilter(where.Filter))
}
