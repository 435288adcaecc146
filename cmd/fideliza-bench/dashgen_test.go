package main

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// TestSalesGrowthDashboards grows a tenant in bulk as the dashboards load
// does, in two steps, and checks on both databases the shape of what it
// wrote and that the dashboards (read from the rollups) answer what the
// rows give: the sales and their amounts by store, and the active
// customers.
func TestSalesGrowthDashboards(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		t.Parallel()
		ctx := context.Background()
		a := app.New(&app.Config{DB: db})
		f, err := seed(ctx, a, 40, false)
		require.NoError(t, err)
		g, err := newSalesGrowth(ctx, db, f.TenantID)
		require.NoError(t, err)
		require.NoError(t, g.growTo(ctx, 300))
		g, err = newSalesGrowth(ctx, db, f.TenantID) // a database grown before goes on
		require.NoError(t, err)
		require.Equal(t, 300, g.sales)
		require.NoError(t, g.growTo(ctx, 700))

		count := func(q string) int {
			var n int
			require.NoError(t, db.SQL.QueryRowContext(ctx, db.Rebind(q), f.TenantID).Scan(&n))
			return n
		}
		require.Equal(t, 700, count(`SELECT count(*) FROM sales WHERE tenant_id = ? AND external_id LIKE 'B%'`))
		require.Equal(t, 560, count(`SELECT count(*) FROM sales WHERE tenant_id = ? AND external_id LIKE 'B%' AND customer_id IS NOT NULL`))
		require.Equal(t, 560, count(`SELECT count(*) FROM points_entries WHERE tenant_id = ? AND source_id LIKE 'B%'`))
		require.Equal(t, 35, count(`SELECT count(*) FROM redemptions WHERE tenant_id = ? AND order_id LIKE 'B%'`))
		require.Greater(t, count(`SELECT count(DISTINCT store_id) FROM sales WHERE tenant_id = ? AND external_id LIKE 'B%'`), 1)

		tctx := viewer.TenantContext(ctx, f.TenantID)
		loc, err := time.LoadLocation("America/Sao_Paulo")
		require.NoError(t, err)
		y, m, d := g.now.In(loc).Date()
		to := time.Date(y, m, d+1, 0, 0, 0, 0, loc)
		from := to.AddDate(0, 0, -365)
		days, err := a.Insights.SalesByStoreDay(tctx, from, to, "")
		require.NoError(t, err)
		got := map[string]int{}
		gotAmount := map[string]decimal.Decimal{}
		for _, d := range days {
			got[d.Store.ID] += d.Sales
			gotAmount[d.Store.ID] = gotAmount[d.Store.ID].Add(d.Amount)
		}
		rows, err := db.SQL.QueryContext(ctx, db.Rebind(`SELECT store_id, amount FROM sales WHERE tenant_id = ? AND sold_at >= ? AND sold_at < ?`),
			f.TenantID, from.UTC(), to.UTC())
		require.NoError(t, err)
		want := map[string]int{}
		wantAmount := map[string]decimal.Decimal{}
		for rows.Next() {
			var store string
			var amount decimal.Decimal
			require.NoError(t, rows.Scan(&store, &amount))
			want[store]++
			wantAmount[store] = wantAmount[store].Add(amount)
		}
		require.NoError(t, rows.Err())
		require.Equal(t, want, got)
		require.Equal(t, len(wantAmount), len(gotAmount))
		for store, w := range wantAmount {
			require.True(t, w.Equal(gotAmount[store]), "store %s: %s from the rows, %s from the rollups", store, w, gotAmount[store])
		}

		active, err := a.Insights.ActiveCustomers(tctx, from, to)
		require.NoError(t, err)
		var wantActive int
		span := []any{f.TenantID, from.UTC(), to.UTC()}
		require.NoError(t, db.SQL.QueryRowContext(ctx, db.Rebind(`SELECT count(DISTINCT customer_id) FROM (
  SELECT customer_id FROM sales WHERE tenant_id = ? AND customer_id IS NOT NULL AND sold_at >= ? AND sold_at < ?
  UNION ALL SELECT customer_id FROM redemptions WHERE tenant_id = ? AND created_at >= ? AND created_at < ?
  UNION ALL SELECT customer_id FROM points_entries WHERE tenant_id = ? AND kind IN ('credit', 'bonus', 'debit') AND created_at >= ? AND created_at < ?) a`),
			append(append(span, span...), span...)...).Scan(&wantActive))
		require.Positive(t, wantActive)
		require.Equal(t, wantActive, active)
	})
}
