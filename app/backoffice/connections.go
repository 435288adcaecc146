package backoffice

import (
	"context"

	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/ent"
)

// The GraphQL connections of the back office: a page of a table in the order and
// under the filter the schema's arguments give (entgql's, generated from
// the ent schema), the viewer's tenant's rows only (ent privacy).

// APIClientConnection is a page of the API clients (GraphQL's apiClients).
func (a *Service) APIClientConnection(ctx context.Context, p kernel.Page, order *ent.APIClientOrder, where *ent.APIClientWhereInput) (*ent.APIClientConnection, error) {
	if err := Rules.APIClientConnection.Allow(ctx); err != nil {
		return nil, err
	}
	return a.k.DB.Ent.APIClient.Query().Paginate(ctx, p.After, p.First, p.Before, p.Last,
		ent.WithAPIClientOrder(order), ent.WithAPIClientFilter(where.Filter))
}

// AuditEventConnection is a page of the audit trail (GraphQL's auditEvents).
func (a *Service) AuditEventConnection(ctx context.Context, p kernel.Page, order *ent.AuditEventOrder, where *ent.AuditEventWhereInput) (*ent.AuditEventConnection, error) {
	if err := Rules.AuditEventConnection.Allow(ctx); err != nil {
		return nil, err
	}
	return a.k.DB.Ent.AuditEvent.Query().Paginate(ctx, p.After, p.First, p.Before, p.Last,
		ent.WithAuditEventOrder(order), ent.WithAuditEventFilter(where.Filter))
}

// StoreConnection is a page of the stores (GraphQL's stores).
func (a *Service) StoreConnection(ctx context.Context, p kernel.Page, order *ent.StoreOrder, where *ent.StoreWhereInput) (*ent.StoreConnection, error) {
	if err := Rules.StoreConnection.Allow(ctx); err != nil {
		return nil, err
	}
	return a.k.DB.Ent.Store.Query().Paginate(ctx, p.After, p.First, p.Before, p.Last,
		ent.WithStoreOrder(order), ent.WithStoreFilter(where.Filter))
}

// TenantConnection is a page of the tenants (the viewer's own) (GraphQL's tenants).
func (a *Service) TenantConnection(ctx context.Context, p kernel.Page, order *ent.TenantOrder, where *ent.TenantWhereInput) (*ent.TenantConnection, error) {
	if err := Rules.TenantConnection.Allow(ctx); err != nil {
		return nil, err
	}
	return a.k.DB.Ent.Tenant.Query().Paginate(ctx, p.After, p.First, p.Before, p.Last,
		ent.WithTenantOrder(order), ent.WithTenantFilter(where.Filter))
}
