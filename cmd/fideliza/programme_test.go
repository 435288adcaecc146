package main

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/app/pos"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/domain/points"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/testclock"
	"github.com/fideliza/fideliza/viewer"
)

// TestProgrammeSettingsFromTheCLI: level thresholds, points expiry months,
// the time zone and price codes changed with `tenant update` change levels
// at their next computation, the expiry of points earned from then on, and
// identify's price code; the rules of cashback spent are set and shown;
// thresholds that do not rise, unknown zones and values out of range are
// refused and change nothing.
func TestProgrammeSettingsFromTheCLI(t *testing.T) {
	t.Parallel()
	withCLITenant(t, "Mercado Programa", func(t *testing.T, u, tid string, logs *syncBuffer) {

		db, err := storage.Open(context.Background(), u)
		require.NoError(t, err)
		defer db.Close()
		clock := testclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
		a := app.New(&app.Config{DB: db, Clock: clock.Now})
		ctx := viewer.TenantContext(context.Background(), tid)
		c, err := a.Customers.CreateCustomer(ctx, customers.CustomerInput{Name: opt.Of("Ana"), Email: opt.Of("ana@example.com"), CPF: opt.Of("52998224725")})
		require.NoError(t, err)
		credit := func(order string, pts int64) time.Time {
			t.Helper()
			m, err := a.Loyalty.CreditPoints(ctx, loyalty.CreditInput{CustomerID: c.ID, OrderID: order, Points: &pts})
			require.NoError(t, err)
			return *m.Entry.ExpiresAt
		}
		level := func() points.Level {
			t.Helper()
			cu, err := db.Ent.Customer.Get(ctx, c.ID)
			require.NoError(t, err)
			return points.Level(cu.Level)
		}

		expires := credit("PED-1", 1500)
		require.Equal(t, time.Date(2027, 3, 2, 3, 0, 0, 0, time.UTC), expires.UTC(),
			"the defaults: 12 months, to the midnight ending the day in São Paulo")
		require.Equal(t, points.Silver, level(), "1500 points with silver at 1000")

		out := fideliza(t, logs, u, "tenant", "update", "--tenant", tid, "--silver-threshold", "2000", "--gold-threshold", "6000",
			"--points-expiry-months", "3", "--price-code-silver", "2", "--price-code-gold", "3",
			"--time-zone", "UTC", "--level-grace-days", "0", "--points-pending-days", "0", "--churn-refit-days", "3")
		require.Equal(t, map[string]any{"silver": float64(2000), "gold": float64(6000), "diamond": float64(20000)}, out["thresholds"])
		require.Equal(t, float64(3), out["points_expiry_months"])
		require.Equal(t, []any{"UTC", float64(0), float64(0), float64(3)},
			[]any{out["time_zone"], out["level_grace_days"], out["points_pending_days"], out["churn_refit_days"]})
		for _, c := range []struct {
			arg  string
			want map[string]any
		}{{"gold=0.8", map[string]any{"gold": "0.8"}}, {"gold=", map[string]any{}}} {
			out := fideliza(t, logs, u, "tenant", "update", "--tenant", tid, "--points-spend-max-share-level", c.arg)
			require.Equal(t, c.want, out["points_spend"].(map[string]any)["max_share_by_level"], c.arg)
		}
		out = fideliza(t, logs, u, "tenant", "update", "--tenant", tid, "--cashback-spend-channels", "pdv",
			"--cashback-spend-max-share", "0.1", "--cashback-spend-min", "5")
		require.Equal(t, map[string]any{"channels": []any{"pdv"}, "max_share": "0.1", "min": "5.00"}, out["cashback_spend"])
		out = fideliza(t, logs, u, "tenant", "update", "--tenant", tid, "--cashback-spend-channels", "")
		require.Equal(t, []any{}, out["cashback_spend"].(map[string]any)["channels"], "spending cashback turned off")
		require.Equal(t, points.Silver, level(), "a level moves at its next computation, not at the change")
		require.NoError(t, a.Loyalty.RecomputeLevels(context.Background(), jobs.RecomputeLevels{}))
		require.Equal(t, points.Bronze, level(), "1500 points no longer reach silver at 2000")

		clock.Advance(time.Hour)
		expires = credit("PED-2", 600)
		require.Equal(t, time.Date(2026, 6, 2, 0, 0, 0, 0, time.UTC), expires.UTC(),
			"points earned after the change expire in 3 months, at a UTC midnight")
		require.Equal(t, points.Silver, level(), "2100 points reach silver at 2000")
		tn, err := db.Ent.Tenant.Get(ctx, tid)
		require.NoError(t, err)
		require.Equal(t, 2, pos.PriceCode(tn, points.Silver))
		require.Equal(t, 0, pos.PriceCode(tn, points.Bronze))

		for _, bad := range [][]string{
			{"--gold-threshold", "1500"},    // below silver (2000)
			{"--silver-threshold", "0"},     // not above 0
			{"--diamond-threshold", "6000"}, // equal to gold
			{"--points-expiry-months", "0"}, {"--points-expiry-months", "121"},
			{"--price-code-gold", "-1"},
			{"--time-zone", "Mars/Olympus"}, {"--time-zone", "Local"},
			{"--points-pending-days", "91"}, {"--level-grace-days", "366"}, {"--churn-refit-days", "0"},
			{"--points-spend-max-share-level", "bronze=0.5"}, {"--points-spend-max-share-level", "gold=2"},
			{"--points-spend-max-share-level", "gold"},
			{"--cashback-spend-channels", "loja"}, {"--cashback-spend-max-share", "1.1"}, {"--cashback-spend-min", "0.001"},
		} {
			cmd := newRootCommand(io.Discard, io.Discard)
			cmd.SetArgs(append([]string{"--database-url", u, "tenant", "update", "--tenant", tid}, bad...))
			require.Error(t, cmd.ExecuteContext(context.Background()), "%v", bad)
		}
		tn2, err := db.Ent.Tenant.Get(ctx, tid)
		require.NoError(t, err)
		require.Equal(t, [4]int64{2000, 6000, 20000, 3}, [4]int64{tn2.SilverThreshold, tn2.GoldThreshold, tn2.DiamondThreshold,
			int64(tn2.PointsExpiryMonths)}, "refused changes change nothing")
		require.Contains(t, logs.String(), `"msg":"tenant settings changed"`, "a change is recorded")
	})
}
