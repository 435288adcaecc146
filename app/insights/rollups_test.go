package insights_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/app/insights"
	"github.com/fideliza/fideliza/app/pos"
	"github.com/fideliza/fideliza/demoyear/demotest"
	"github.com/fideliza/fideliza/domain/rollup"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/campaign"
	"github.com/fideliza/fideliza/ent/redemption"
	"github.com/fideliza/fideliza/ent/sale"
	"github.com/fideliza/fideliza/ent/salereturn"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// TestRollupsMatchRows plays the living demo's year (sales, returns,
// redemptions, points earned, spent and expired), then cancels sales,
// rolls redemptions back and expires a year of points, and checks on both
// databases that the rollups the triggers kept are those a rebuild counts
// from the rows, and that every dashboard answers from them what it
// answers from the rows, over whole days and cut ones; then again after
// the tenant moves to another time zone.
func TestRollupsMatchRows(t *testing.T) {
	t.Parallel()
	end := demotest.Today()
	for _, d := range storagetest.Dialects() {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			db := demotest.Open(t, d, end)
			a := app.New(&app.Config{DB: db, Clock: func() time.Time { return end }})
			ctx := viewer.TenantContext(context.Background(), app.DemoTenantID)
			rollupsMix(ctx, t, a, db)

			rollupsMatch(ctx, t, a, db, "America/Sao_Paulo", end)

			// The tenant moves 8½ hours east: every day is counted again.
			zone := "Asia/Kolkata"
			_, err := a.Backoffice.UpdateTenant(viewer.SystemContext(context.Background()), app.DemoTenantID, backoffice.TenantSettings{TimeZone: &zone})
			require.NoError(t, err)
			rollupsMatch(ctx, t, a, db, zone, end)
		})
	}
}

// rollupsMix cancels three sales, rolls three redemptions back and, a year
// later, expires what is due.
func rollupsMix(ctx context.Context, t *testing.T, a *app.App, db *storage.DB) {
	t.Helper()
	sales, err := db.Ent.Sale.Query().Where(sale.StatusEQ(sale.StatusPROCESSED), sale.CustomerIDNotNil()).
		Order(ent.Desc(sale.FieldSoldAt)).Limit(3).WithStore().All(ctx)
	require.NoError(t, err)
	require.Len(t, sales, 3)
	at := a.Now()
	for _, s := range sales {
		r, err := a.POS.RegisterSaleReturn(ctx, pos.SaleReturnInput{Protocol: "PARTNER_V1", SaleRef: s.ID, Kind: salereturn.KindCancellation,
			ID: "CAN-" + s.ID, StoreID: s.Edges.Store.Code, PosID: "PDV-1", Date: &at, Reason: "cancelada"})
		require.NoError(t, err)
		require.NoError(t, a.POS.ProcessSaleReturn(ctx, jobs.ProcessSaleReturn{TenantID: app.DemoTenantID, ReturnID: r.ID}))
	}
	reds, err := db.Ent.Redemption.Query().Where(redemption.RolledBackAtIsNil()).Order(ent.Asc(redemption.FieldID)).Limit(3).IDs(ctx)
	require.NoError(t, err)
	require.Len(t, reds, 3)
	for _, id := range reds {
		_, err := a.Loyalty.RollbackRedemption(ctx, id, "teste")
		require.NoError(t, err)
	}
	later := app.New(&app.Config{DB: db, Clock: func() time.Time { return a.Now().AddDate(1, 0, 0) }})
	require.NoError(t, later.Loyalty.ExpirePoints(ctx, jobs.ExpirePoints{}))

	// A holdout campaign over the last 120 days, created after their sales.
	from, to := at.AddDate(0, 0, -120), at.AddDate(0, 0, 30)
	_, err = a.Campaigns.CreateCampaign(ctx, campaigns.CampaignInput{Name: "Retroativa", Type: "discount", StartsAt: &from, EndsAt: &to,
		Discount: &campaigns.DiscountInput{Mode: "percentage", Value: ptr(decimal.NewFromInt(5))}, HoldoutBasisPoints: 500})
	require.NoError(t, err)

	cancelled, err := db.Ent.Sale.Query().Where(sale.StatusEQ(sale.StatusCANCELLED)).Count(ctx)
	require.NoError(t, err)
	require.Equal(t, 3, cancelled)
}

// rollupsMatch checks the rollups against the rows in zone, the tenant's.
func rollupsMatch(ctx context.Context, t *testing.T, a *app.App, db *storage.DB, zone string, end time.Time) {
	t.Helper()
	kept := rollupRows(t, db)
	require.NotEmpty(t, kept["rollup_sales_days"])
	require.NotEmpty(t, kept["rollup_active_pairs"])
	require.NotEmpty(t, kept["rollup_campaign_customers"])
	_, err := a.Insights.RebuildRollups(ctx, app.DemoTenantID)
	require.NoError(t, err)
	require.Equal(t, kept, rollupRows(t, db), "the rollups the triggers kept are those the rows give")

	// What the customers paid in each holdout campaign's period, to its
	// end, to the middle of it and to now.
	holdouts, err := db.Ent.Campaign.Query().Where(campaign.HoldoutBasisPointsGT(0)).All(ctx)
	require.NoError(t, err)
	require.Len(t, holdouts, 2, "the demo's and the one created after its year")
	for _, c := range holdouts {
		for _, until := range []time.Time{c.EndsAt, c.StartsAt.Add(c.EndsAt.Sub(c.StartsAt) / 2), end} {
			paid, err := a.Insights.CampaignCustomersPaid(ctx, c, until)
			require.NoError(t, err)
			want, err := a.Insights.CampaignCustomersPaidFromRows(ctx, c, until)
			require.NoError(t, err)
			require.NotEmpty(t, want)
			require.Equal(t, customersPaid(want), customersPaid(paid), "%s until %s", c.Name, until)
		}
	}

	loc, err := time.LoadLocation(zone)
	require.NoError(t, err)
	y, m, d := end.In(loc).Date()
	tomorrow := time.Date(y, m, d+1, 0, 0, 0, 0, loc)
	periods := []struct {
		name     string
		from, to time.Time
	}{
		{"a year of days", tomorrow.AddDate(0, 0, -365), tomorrow},
		{"30 days", tomorrow.AddDate(0, 0, -30), tomorrow},
		{"days cut at both ends", tomorrow.AddDate(0, 0, -40).Add(5*time.Hour + 17*time.Minute), tomorrow.AddDate(0, 0, -3).Add(19 * time.Hour)},
		{"within a day", tomorrow.AddDate(0, 0, -9).Add(9 * time.Hour), tomorrow.AddDate(0, 0, -9).Add(21 * time.Hour)},
		{"across one midnight", tomorrow.AddDate(0, 0, -60).Add(-10 * time.Hour), tomorrow.AddDate(0, 0, -60).Add(14 * time.Hour)},
	}
	campaigns, err := db.Ent.Campaign.Query().All(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, campaigns)
	for _, p := range periods {
		t.Run(zone+"/"+p.name, func(t *testing.T) {
			got, err := a.Insights.SalesByStoreDay(ctx, p.from, p.to, "")
			require.NoError(t, err)
			want, err := a.Insights.SalesByStoreDayFromRows(ctx, p.from, p.to, zone)
			require.NoError(t, err)
			require.NotEmpty(t, want)
			require.Equal(t, storeDays(want), storeDays(got))

			n, err := a.Insights.ActiveCustomers(ctx, p.from, p.to)
			require.NoError(t, err)
			wantN, err := a.Insights.ActiveCustomersFromRows(ctx, p.from, p.to)
			require.NoError(t, err)
			require.Positive(t, wantN)
			require.Equal(t, wantN, n)

			liability, err := a.Insights.PointsLiabilityByDay(ctx, p.from, p.to, "")
			require.NoError(t, err)
			wantLiability, err := a.Insights.PointsLiabilityByDayFromLedger(ctx, p.from, p.to, zone)
			require.NoError(t, err)
			require.Equal(t, wantLiability, liability)

			ids := make([]string, len(campaigns))
			for i, c := range campaigns {
				ids[i] = c.ID
			}
			for _, b := range [][2]*time.Time{{&p.from, &p.to}, {&p.from, nil}, {nil, &p.to}, {nil, nil}} {
				got, err := a.Insights.CampaignsPerformance(ctx, ids, b[0], b[1])
				require.NoError(t, err)
				require.Len(t, got, len(campaigns))
				for _, c := range campaigns {
					want, err := a.Insights.CampaignPerformanceFromRows(ctx, c, b[0], b[1])
					require.NoError(t, err)
					require.Equal(t, performance(want), performance(got[c.ID]), c.Name)
				}
			}
		})
	}
}

// storeDays writes sales per store and day as text, decimals exact.
func storeDays(days []*insights.StoreDaySales) []string {
	out := make([]string, len(days))
	for i, d := range days {
		out[i] = fmt.Sprintf("%s %s %d %s %s %s", d.Day, d.Store.Code, d.Sales, d.Amount, d.DiscountAmount, d.AmountPayable)
	}
	return out
}

// performance writes a campaign's performance as text, decimals exact.
func performance(p *insights.CampaignPerformance) string {
	return fmt.Sprintf("%d %s %s %s", p.Redemptions, p.DiscountGiven, p.CashbackPromised, p.Revenue)
}

// customersPaid writes what each customer paid as text, decimals exact.
func customersPaid(paid map[string]rollup.Paid) map[string]string {
	out := make(map[string]string, len(paid))
	for id, p := range paid {
		out[id] = fmt.Sprintf("%d %s", p.Sales, p.Amount)
	}
	return out
}

// rollupRows reads every rollup of the demo tenant, each row as text, by
// table (the pairs no customer holds any more left out).
func rollupRows(t *testing.T, db *storage.DB) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, q := range []string{
		`SELECT * FROM rollup_sales_days WHERE tenant_id = ? ORDER BY day, store_id`,
		`SELECT * FROM rollup_campaign_days WHERE tenant_id = ? ORDER BY campaign_id, day`,
		`SELECT * FROM rollup_points_days WHERE tenant_id = ? ORDER BY day`,
		`SELECT * FROM rollup_customer_days WHERE tenant_id = ? ORDER BY customer_id, day`,
		`SELECT * FROM rollup_active_pairs WHERE tenant_id = ? AND customers <> 0 ORDER BY day, prev_day`,
		`SELECT * FROM rollup_campaign_customers WHERE tenant_id = ? ORDER BY campaign_id, customer_id`,
	} {
		if db.Dialect == dialect.Postgres {
			q = strings.Replace(q, "?", "$1", 1)
		}
		rows, err := db.SQL.Query(q, app.DemoTenantID)
		require.NoError(t, err)
		cols, err := rows.Columns()
		require.NoError(t, err)
		table := strings.Fields(q)[3]
		for rows.Next() {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			require.NoError(t, rows.Scan(ptrs...))
			var b strings.Builder
			for _, v := range vals {
				b.WriteString(v.String + " ")
			}
			out[table] = append(out[table], b.String())
		}
		require.NoError(t, rows.Err())
		require.NoError(t, rows.Close())
	}
	return out
}
