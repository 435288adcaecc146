package graph

import (
	"context"
	"fmt"
	"slices"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/apiclient"
)

// TenantSettings are the settings an operator or admin may change; nil
// leaves a setting as it is.
type TenantSettings struct {
	Name             *string
	Active           *bool
	PreRegistration  *bool
	SaleRegistration *bool
	SaleTolerance    *decimal.Decimal
	PointsPerReal    *decimal.Decimal
}

// CreateTenant creates a retailer, or a sandbox of one when sandboxOf is set.
func (a *App) CreateTenant(ctx context.Context, name string, sandboxOf *string) (*ent.Tenant, error) {
	return a.DB.Ent.Tenant.Create().SetName(name).SetNillableSandboxOfID(sandboxOf).Save(ctx)
}

// UpdateTenant changes the settings of a tenant.
func (a *App) UpdateTenant(ctx context.Context, id string, s TenantSettings) (*ent.Tenant, error) {
	if s.SaleTolerance != nil && s.SaleTolerance.IsNegative() {
		return nil, fmt.Errorf("sale tolerance must not be negative")
	}
	if s.PointsPerReal != nil && s.PointsPerReal.IsNegative() {
		return nil, fmt.Errorf("points per real must not be negative")
	}
	u := a.DB.Ent.Tenant.UpdateOneID(id).
		SetNillableName(s.Name).
		SetNillableActive(s.Active).
		SetNillablePreRegistration(s.PreRegistration).
		SetNillableSaleRegistration(s.SaleRegistration)
	if s.SaleTolerance != nil {
		u.SetSaleTolerance(*s.SaleTolerance)
	}
	if s.PointsPerReal != nil {
		u.SetPointsPerReal(*s.PointsPerReal)
	}
	return u.Save(ctx)
}

// CreateStore registers a store of a tenant under its external code.
func (a *App) CreateStore(ctx context.Context, tenantID, code, name string) (*ent.Store, error) {
	return a.DB.Ent.Store.Create().SetTenantID(tenantID).SetCode(code).SetName(name).Save(ctx)
}

// ClientCredentials is a client with its secret, which exists only here:
// the database keeps its hash.
type ClientCredentials struct {
	Client *ent.APIClient
	Secret string
}

// CreateClient creates an OAuth or POS client. OAuth clients get every scope
// unless scopes narrows them; POS clients have none.
func (a *App) CreateClient(ctx context.Context, tenantID string, kind apiclient.Kind, name string, scopes []string) (*ClientCredentials, error) {
	return createClient(ctx, a.DB.Ent, tenantID, "", kind, name, scopes)
}

// createClient creates a client with the given id, or a generated one when
// id is empty.
func createClient(ctx context.Context, c *ent.Client, tenantID, id string, kind apiclient.Kind, name string, scopes []string) (*ClientCredentials, error) {
	if err := apiclient.KindValidator(kind); err != nil {
		return nil, fmt.Errorf("kind must be oauth or pos")
	}
	switch {
	case kind == apiclient.KindPos && len(scopes) > 0:
		return nil, fmt.Errorf("pos clients have no scopes")
	case kind == apiclient.KindOauth && len(scopes) == 0:
		scopes = auth.Scopes
	}
	for _, s := range scopes {
		if !slices.Contains(auth.Scopes, s) {
			return nil, fmt.Errorf("unknown scope %q (known: %v)", s, auth.Scopes)
		}
	}
	secret, hash := auth.NewSecret()
	create := c.APIClient.Create().
		SetTenantID(tenantID).SetKind(kind).SetName(name).SetScopes(scopes).SetSecretHash(hash)
	if id != "" {
		create.SetID(id)
	}
	created, err := create.Save(ctx)
	if err != nil {
		return nil, err
	}
	return &ClientCredentials{Client: created, Secret: secret}, nil
}

// RotateClient gives a client a new secret; the old one stops working at once.
func (a *App) RotateClient(ctx context.Context, clientID string) (*ClientCredentials, error) {
	return rotateClient(ctx, a.DB.Ent, clientID)
}

func rotateClient(ctx context.Context, client *ent.Client, clientID string) (*ClientCredentials, error) {
	secret, hash := auth.NewSecret()
	c, err := client.APIClient.UpdateOneID(clientID).SetSecretHash(hash).Save(ctx)
	if err != nil {
		return nil, err
	}
	return &ClientCredentials{Client: c, Secret: secret}, nil
}
