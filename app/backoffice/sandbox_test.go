package backoffice_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/apptest"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/demoyear"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// TestSandboxLifecycle: an admin creates a sandbox with the demo data,
// gives it credentials, fills it and resets it; nobody else manages it.
func TestSandboxLifecycle(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		prod := apptest.New(t, db, apptest.WithHistory(demoyear.Play))
		other := prod.Tenant(t, "Outra")
		a := prod.App
		as := func(tenantID string, role viewer.Role) context.Context {
			return viewer.NewContext(context.Background(), viewer.Viewer{Role: role, TenantID: tenantID, Subject: "user:t",
				Scopes: auth.RoleScopes(role)})
		}
		admin := as(prod.TenantID, viewer.RoleAdmin)

		_, err := a.Backoffice.CreateSandbox(as(prod.TenantID, viewer.RoleAnalyst), "")
		require.Error(t, err, "analysts read only")
		sb, err := a.Backoffice.CreateSandbox(admin, "")
		require.NoError(t, err)
		require.Equal(t, "Loja (sandbox)", sb.Name)
		require.Equal(t, prod.TenantID, *sb.SandboxOfID)

		tenants, err := a.Backoffice.ManagedTenants(admin)
		require.NoError(t, err)
		require.Len(t, tenants, 2)
		require.Equal(t, []string{prod.TenantID, sb.ID}, []string{tenants[0].ID, tenants[1].ID})

		inSandbox := viewer.TenantContext(context.Background(), sb.ID)
		demoCustomers, err := db.Ent.Customer.Query().Count(inSandbox)
		require.NoError(t, err)
		// The small demo's four customers, and the shoppers of the living
		// demo's generator who joined in its few months, with their history.
		require.Greater(t, demoCustomers, 100)
		demoEntries, err := db.Ent.PointsEntry.Query().Count(inSandbox)
		require.NoError(t, err)
		require.Greater(t, demoEntries, 100)
		sales, err := db.Ent.Sale.Query().Count(inSandbox)
		require.NoError(t, err)
		require.Greater(t, sales, 100)

		cred, err := a.Backoffice.CreateSandboxClient(admin, sb.ID, apiclient.KindOauth, "dev")
		require.NoError(t, err)
		require.Equal(t, sb.ID, cred.Client.TenantID)
		require.NotEmpty(t, cred.Secret)
		rotated, err := a.Backoffice.RotateSandboxClient(admin, sb.ID, cred.Client.ID)
		require.NoError(t, err)
		require.NotEqual(t, cred.Secret, rotated.Secret)

		// Fill the sandbox, then reset it.
		c, err := a.Customers.CreateCustomer(inSandbox, customers.CustomerInput{Name: opt.Of("Teste"), Email: opt.Of("t@x.example"), CPF: opt.Of("71428793860")})
		require.NoError(t, err)
		pts := int64(100)
		_, err = a.Loyalty.CreditPoints(inSandbox, loyalty.CreditInput{CustomerID: c.ID, OrderID: "o-1", Points: &pts})
		require.NoError(t, err)
		require.NoError(t, a.Backoffice.ResetSandbox(admin, sb.ID))
		n, err := db.Ent.Customer.Query().Count(inSandbox)
		require.NoError(t, err)
		require.Equal(t, demoCustomers, n)
		entries, err := db.Ent.PointsEntry.Query().Count(inSandbox)
		require.NoError(t, err)
		// The same history again, once: the generator is seeded, but who its
		// experiment holds out follows the customers' ids, new at each play,
		// and the treated shop more often (demoyear.demoClub).
		require.InEpsilon(t, demoEntries, entries, 0.2, "the same history again, played once")
		gone, err := db.Ent.Customer.Query().Where(customer.ID(c.ID)).Exist(inSandbox)
		require.NoError(t, err)
		require.False(t, gone, "what the sandbox was filled with is gone")
		clients, err := a.Backoffice.SandboxClients(admin, sb.ID)
		require.NoError(t, err)
		require.Len(t, clients, 1, "credentials survive a reset")

		// Production and other tenants are untouched, and cannot manage it.
		prodCustomers, err := db.Ent.Customer.Query().Count(viewer.TenantContext(context.Background(), prod.TenantID))
		require.NoError(t, err)
		require.Zero(t, prodCustomers)
		for name, ctx := range map[string]context.Context{
			"another tenant's admin": as(other.TenantID, viewer.RoleAdmin),
			"the sandbox's own user": as(sb.ID, viewer.RoleAdmin),
		} {
			t.Run(name, func(t *testing.T) {
				err := a.Backoffice.ResetSandbox(ctx, sb.ID)
				e, ok := apperr.As(err)
				require.True(t, ok, "%v", err)
				require.Contains(t, []apperr.Kind{apperr.KindNotFound, apperr.KindForbidden}, e.Kind)
			})
		}
		require.Error(t, a.Backoffice.ResetSandbox(admin, prod.TenantID), "production is never reset")
	})
}
