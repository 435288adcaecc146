package main

import (
	"context"
	"testing"

	"entgo.io/ent/dialect"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/viewer"
)

// TestRollupsRebuildFromTheCLI: rollups lost (deleted here) come back from
// the rows with `rollups rebuild`, for one tenant or every one.
func TestRollupsRebuildFromTheCLI(t *testing.T) {
	t.Parallel()
	withCLITenant(t, "Mercado Rollups", func(t *testing.T, u, tid string, logs *syncBuffer) {
		db, err := storage.Open(context.Background(), u)
		require.NoError(t, err)
		defer db.Close()
		a := app.New(&app.Config{DB: db})
		ctx := viewer.TenantContext(context.Background(), tid)
		c, err := a.Customers.CreateCustomer(ctx, customers.CustomerInput{Name: opt.Of("Ana"), Email: opt.Of("ana@example.com"), CPF: opt.Of("52998224725")})
		require.NoError(t, err)
		pts := int64(1500)
		_, err = a.Loyalty.CreditPoints(ctx, loyalty.CreditInput{CustomerID: c.ID, OrderID: "PED-1", Points: &pts})
		require.NoError(t, err)

		earned := func() (n int64) {
			t.Helper()
			q := `SELECT coalesce(sum(credited), 0) FROM rollup_points_days WHERE tenant_id = ?`
			if db.Dialect == dialect.Postgres {
				q = `SELECT coalesce(sum(credited), 0) FROM rollup_points_days WHERE tenant_id = $1`
			}
			require.NoError(t, db.SQL.QueryRow(q, tid).Scan(&n))
			return n
		}
		require.Equal(t, int64(1500), earned(), "the credit's trigger counted it")
		for _, args := range [][]string{{"rollups", "rebuild", "--tenant", tid}, {"rollups", "rebuild"}} {
			_, err = db.SQL.Exec(`DELETE FROM rollup_points_days`)
			require.NoError(t, err)
			require.Zero(t, earned())
			out := fideliza(t, logs, u, args...)
			require.Contains(t, out["tenants"], tid)
			require.Equal(t, int64(1500), earned(), "rebuilt from the ledger")
		}
	})
}
