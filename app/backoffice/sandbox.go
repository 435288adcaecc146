package backoffice

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/fideliza/fideliza/app/kernel"

	entsql "entgo.io/ent/dialect/sql"
	"entgo.io/ent/dialect/sql/schema"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/ent/change"
	"github.com/fideliza/fideliza/ent/migrate"
	entschema "github.com/fideliza/fideliza/ent/schema"
	"github.com/fideliza/fideliza/ent/tenant"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/viewer"
)

// A sandbox is a tenant of its own, linked to a production tenant: its
// credentials reach only its own rows, as any tenant's do. The one rule
// crossing tenants lives here: a back-office user of a production tenant
// manages that tenant's sandboxes.

// ManagedTenants returns the viewer's tenant followed by its sandboxes.
func (a *Service) ManagedTenants(ctx context.Context) ([]*ent.Tenant, error) {
	if err := Rules.ManagedTenants.Allow(ctx); err != nil {
		return nil, err
	}
	own, err := a.productionTenant(ctx)
	if err != nil {
		return nil, err
	}
	sandboxes, err := a.k.DB.Ent.Tenant.Query().Where(tenant.SandboxOfID(own.ID)).
		Order(ent.Asc(tenant.FieldCreatedAt), ent.Asc(tenant.FieldID)).All(viewer.SystemContext(ctx))
	if err != nil {
		return nil, err
	}
	return append([]*ent.Tenant{own}, sandboxes...), nil
}

// Tenant reads one tenant by id.
func (a *Service) Tenant(ctx context.Context, id string) (*ent.Tenant, error) {
	if err := Rules.Tenant.Allow(ctx); err != nil {
		return nil, err
	}
	t, err := a.k.DB.Ent.Tenant.Get(ctx, id)
	if err != nil {
		return nil, kernel.NotFoundAs(err, "tenant")
	}
	return t, nil
}

// productionTenant returns the viewer's tenant, refusing a sandbox's users:
// sandboxes are managed from their production tenant.
func (a *Service) productionTenant(ctx context.Context) (*ent.Tenant, error) {
	id, err := kernel.ViewerTenant(ctx)
	if err != nil {
		return nil, err
	}
	t, err := a.k.DB.Ent.Tenant.Get(ctx, id)
	if err != nil {
		return nil, kernel.NotFoundAs(err, "tenant")
	}
	if t.SandboxOfID != nil {
		return nil, apperr.Forbidden("forbidden", "sandboxes are managed from their production tenant")
	}
	return t, nil
}

// CreateSandbox creates a sandbox of the viewer's tenant and loads the demo
// data into it; admins only.
func (a *Service) CreateSandbox(ctx context.Context, name string) (*ent.Tenant, error) {
	if err := Rules.CreateSandbox.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("name", name); err != nil {
		return nil, err
	}
	own, err := a.productionTenant(ctx)
	if err != nil {
		return nil, err
	}
	if name = strings.TrimSpace(name); name == "" {
		name = own.Name + " (sandbox)"
	}
	var sb *ent.Tenant
	err = a.k.DB.InTx(viewer.SystemContext(ctx), func(tx storage.Tx) error {
		sys := viewer.SystemContext(ctx)
		sb, err = tx.Ent.Tenant.Create().SetName(name).SetSandboxOfID(own.ID).
			SetPreRegistration(own.PreRegistration).SetSaleRegistration(own.SaleRegistration).Save(sys)
		if err != nil {
			return err
		}
		return a.Demo.Seed(sys, tx.Ent, sb.ID)
	})
	if err != nil {
		return nil, err
	}
	return sb, a.playSandboxHistory(ctx, sb.ID)
}

// SeedDemoTenant gives an empty tenant the data a new sandbox gets: the
// small demo's stores, customers, segment and campaigns, then the living
// demo's generator at a sandbox's size. The load tool makes its tenant
// with it, then adds the data its measures need.
func (a *Service) SeedDemoTenant(ctx context.Context, tenantID string) error {
	if err := Rules.SeedDemoTenant.Allow(ctx); err != nil {
		return err
	}
	return a.seedDemoTenant(ctx, tenantID)
}

// seedDemoTenant is SeedDemoTenant without its policy check, for the operations
// of this context that call it.
func (a *Service) seedDemoTenant(ctx context.Context, tenantID string) error {
	sys := viewer.SystemContext(ctx)
	if err := a.k.DB.InTx(sys, func(tx storage.Tx) error { return a.Demo.Seed(sys, tx.Ent, tenantID) }); err != nil {
		return err
	}
	return a.playSandboxHistory(ctx, tenantID)
}

// playSandboxHistory gives a sandbox holding the small demo's data a few
// months of the living demo's history (the generator of serve --demo at a
// sandbox's size), so that its dashboards and the integrations tried against
// it meet a retailer's life.
func (a *Service) playSandboxHistory(ctx context.Context, sandboxID string) error {
	if err := a.Demo.PlayHistory(ctx, sandboxID); err != nil {
		return fmt.Errorf("the sandbox's history: %w", err)
	}
	return nil
}

// InSandbox returns a context acting in sandboxID with the viewer's role,
// when sandboxID is a sandbox of the viewer's tenant.
func (a *Service) InSandbox(ctx context.Context, sandboxID string) (context.Context, error) {
	if err := Rules.InSandbox.Allow(ctx); err != nil {
		return nil, err
	}
	return a.inSandbox(ctx, sandboxID)
}

// inSandbox is InSandbox without its policy check, for the operations
// of this context that call it.
func (a *Service) inSandbox(ctx context.Context, sandboxID string) (context.Context, error) {
	if err := kernel.Guarded("sandbox_id", sandboxID); err != nil {
		return nil, err
	}
	v, _ := viewer.FromContext(ctx)
	own, err := a.productionTenant(ctx)
	if err != nil {
		return nil, err
	}
	sb, err := a.k.DB.Ent.Tenant.Get(viewer.SystemContext(ctx), sandboxID)
	if err != nil || sb.SandboxOfID == nil || *sb.SandboxOfID != own.ID {
		return nil, apperr.NotFound("sandbox")
	}
	v.TenantID = sb.ID
	return viewer.NewContext(ctx, v), nil
}

// SandboxClients lists a sandbox's API clients, newest first.
func (a *Service) SandboxClients(ctx context.Context, sandboxID string) ([]*ent.APIClient, error) {
	if err := Rules.SandboxClients.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("sandbox_id", sandboxID); err != nil {
		return nil, err
	}
	ctx, err := a.inSandbox(ctx, sandboxID)
	if err != nil {
		return nil, err
	}
	return a.k.DB.Ent.APIClient.Query().Order(ent.Desc(apiclient.FieldCreatedAt), ent.Desc(apiclient.FieldID)).All(ctx)
}

// CreateSandboxClient creates credentials of a sandbox; admins only. The
// secret is in the answer only.
func (a *Service) CreateSandboxClient(ctx context.Context, sandboxID string, kind apiclient.Kind, name string) (*ClientCredentials, error) {
	if err := Rules.CreateSandboxClient.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("sandbox_id", sandboxID, "name", name); err != nil {
		return nil, err
	}
	ctx, err := a.inSandbox(ctx, sandboxID)
	if err != nil {
		return nil, err
	}
	return a.createClient(ctx, sandboxID, kind, name, nil)
}

// RotateSandboxClient gives a sandbox's client a new secret; admins only.
func (a *Service) RotateSandboxClient(ctx context.Context, sandboxID, clientID string) (*ClientCredentials, error) {
	if err := Rules.RotateSandboxClient.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("sandbox_id", sandboxID, "client_id", clientID); err != nil {
		return nil, err
	}
	ctx, err := a.inSandbox(ctx, sandboxID)
	if err != nil {
		return nil, err
	}
	return a.rotateClient(ctx, clientID)
}

// ResetSandbox deletes a sandbox's data and loads the demo data again, in
// one transaction; its credentials and settings stay. Admins only.
func (a *Service) ResetSandbox(ctx context.Context, sandboxID string) error {
	if err := Rules.ResetSandbox.Allow(ctx); err != nil {
		return err
	}
	if err := kernel.Guarded("sandbox_id", sandboxID); err != nil {
		return err
	}
	if _, err := a.inSandbox(ctx, sandboxID); err != nil {
		return err
	}
	sys := viewer.SystemContext(ctx)
	err := a.k.DB.InTx(sys, func(tx storage.Tx) error {
		if err := wipeTenantData(sys, tx.SQL, a.k.DB.Dialect, sandboxID); err != nil {
			return err
		}
		if err := a.Demo.Seed(sys, tx.Ent, sandboxID); err != nil {
			return err
		}
		if err := a.k.Changed(sys, tx, sandboxID, change.PartCampaigns, change.PartStores); err != nil {
			return err
		}
		return entschema.Audit(ctx, tx.Ent, "sandbox.reset", "sandbox", sandboxID, nil) // in the admin's tenant
	})
	if err != nil {
		return err
	}
	return a.playSandboxHistory(ctx, sandboxID)
}

// keptOnReset are the tenant-owned tables a sandbox reset leaves alone:
// its credentials, where its events go, and its audit trail.
var keptOnReset = map[string]bool{"api_clients": true, "webhook_endpoints": true, "audit_events": true}

// wipeTenantData deletes every business row of a tenant: each table with a
// tenant_id column but those of keptOnReset, a table only after the tables
// that reference it. New tables are wiped without being listed here. This
// is the service acting as the operator, in a transaction it opened.
func wipeTenantData(ctx context.Context, tx *sql.Tx, dialectName, tenantID string) error {
	for _, t := range wipeOrder() {
		query, args := entsql.Dialect(dialectName).Delete(t.Name).Where(entsql.EQ("tenant_id", tenantID)).Query()
		if _, err := tx.ExecContext(ctx, query, args...); err != nil {
			return fmt.Errorf("wiping %s: %w", t.Name, err)
		}
	}
	return nil
}

// wipeOrder returns the tenant-owned tables to wipe, referencing tables
// before the tables they reference.
func wipeOrder() []*schema.Table {
	owned := map[string]*schema.Table{}
	for _, t := range migrate.Tables {
		if t.HasColumn("tenant_id") && !keptOnReset[t.Name] {
			owned[t.Name] = t
		}
	}
	var order []*schema.Table
	for len(owned) > 0 {
		before := len(owned)
		for _, name := range slices.Sorted(maps.Keys(owned)) {
			referenced := false
			for _, other := range owned {
				for _, fk := range other.ForeignKeys {
					referenced = referenced || (other.Name != name && fk.RefTable.Name == name)
				}
			}
			if !referenced {
				order = append(order, owned[name])
				delete(owned, name)
			}
		}
		if len(owned) == before {
			panic(fmt.Sprintf("tenant tables reference each other in a cycle: %v", slices.Collect(maps.Keys(owned))))
		}
	}
	return order
}
