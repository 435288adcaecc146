package schema_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// rollupView is one of the dashboards' rollups, which triggers write and
// ent reads as a view: its table, a row's key columns after tenant_id, and
// the tenants of the rows a viewer reads.
type rollupView struct {
	table  string
	key    string // columns after tenant_id, and their values
	values string
	read   func(ctx context.Context, c *ent.Client) ([]string, error)
}

func rollupViews() []rollupView {
	return []rollupView{
		{"rollup_sales_days", "day, store_id, sales", "'2026-01-01', 's', 1",
			func(ctx context.Context, c *ent.Client) ([]string, error) {
				rows, err := c.RollupSalesDay.Query().All(ctx)
				return tenantsOf(rows, err, func(r *ent.RollupSalesDay) string { return r.TenantID })
			}},
		{"rollup_campaign_days", "campaign_id, day, redemptions", "'c', '2026-01-01', 1",
			func(ctx context.Context, c *ent.Client) ([]string, error) {
				rows, err := c.RollupCampaignDay.Query().All(ctx)
				return tenantsOf(rows, err, func(r *ent.RollupCampaignDay) string { return r.TenantID })
			}},
		{"rollup_points_days", "day, net", "'2026-01-01', 1",
			func(ctx context.Context, c *ent.Client) ([]string, error) {
				rows, err := c.RollupPointsDay.Query().All(ctx)
				return tenantsOf(rows, err, func(r *ent.RollupPointsDay) string { return r.TenantID })
			}},
		{"rollup_customer_days", "customer_id, day, events", "'c', '2026-01-01', 1",
			func(ctx context.Context, c *ent.Client) ([]string, error) {
				rows, err := c.RollupCustomerDay.Query().All(ctx)
				return tenantsOf(rows, err, func(r *ent.RollupCustomerDay) string { return r.TenantID })
			}},
		{"rollup_active_pairs", "day, prev_day, customers", "'2026-01-02', '2026-01-01', 1",
			func(ctx context.Context, c *ent.Client) ([]string, error) {
				rows, err := c.RollupActivePair.Query().All(ctx)
				return tenantsOf(rows, err, func(r *ent.RollupActivePair) string { return r.TenantID })
			}},
		{"rollup_customer_stores", "customer_id, store_id, purchases", "'c', 's', 1",
			func(ctx context.Context, c *ent.Client) ([]string, error) {
				rows, err := c.RollupCustomerStore.Query().All(ctx)
				return tenantsOf(rows, err, func(r *ent.RollupCustomerStore) string { return r.TenantID })
			}},
	}
}

func tenantsOf[R any](rows []R, err error, tenant func(R) string) ([]string, error) {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = tenant(r)
	}
	return out, err
}

// TestRollupsFilteredByTenant: a tenant's principals read their own
// tenant's rollups only, a context without a viewer none, the service all.
func TestRollupsFilteredByTenant(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newFixture(t, db.Ent)
		for _, v := range rollupViews() {
			t.Run(v.table, func(t *testing.T) {
				for _, tenantID := range []string{f.a.tenant, f.b.tenant} {
					_, err := db.SQL.ExecContext(t.Context(), "INSERT INTO "+v.table+" (tenant_id, "+v.key+") VALUES ('"+
						tenantID+"', "+v.values+")")
					require.NoError(t, err)
				}
				for _, role := range []viewer.Role{viewer.RoleAdmin, viewer.RoleAnalyst, viewer.RoleClient} {
					seen, err := v.read(viewerCtx(t, role, f.a.tenant), db.Ent)
					require.NoError(t, err, role)
					require.NotEmpty(t, seen, role)
					for _, tenantID := range seen {
						require.Equal(t, f.a.tenant, tenantID, role)
					}
				}
				_, err := v.read(t.Context(), db.Ent)
				requireDenied(t, err, "no viewer")
				seen, err := v.read(sysCtx(t), db.Ent)
				require.NoError(t, err)
				require.Subset(t, seen, []string{f.a.tenant, f.b.tenant})
			})
		}
	})
}
