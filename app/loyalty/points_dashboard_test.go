package loyalty_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// TestPointsSpentByStoreDay: the dashboard sums the points sales paid with
// and the R$ of their POINTS payments per store and local day, and leaves
// out integrators' debits and sales not paid with points.
func TestPointsSpentByStoreDay(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		t.Parallel()
		e := newSpendEnv(t, db, 10_000)
		sys := viewer.SystemContext(context.Background())
		for _, s := range []struct{ receipt, total, points string }{{"1", "10.00", "2.50"}, {"2", "5.00", "1.25"}} {
			h, err := e.hold("session-"+s.receipt, s.points)
			require.NoError(t, err)
			sl, err := e.sale(s.receipt, s.total, s.points, h.ID)
			require.NoError(t, err)
			require.NoError(t, e.app.POS.ProcessSale(sys, jobs.ProcessSale{TenantID: e.tenant, SaleID: sl.ID}))
		}
		_, err := e.app.Loyalty.DebitPoints(e.ctx, loyalty.DebitInput{CustomerID: e.customer, Points: 100})
		require.NoError(t, err)
		now := e.clock.Now()
		for _, c := range []struct {
			name, zone, day string
			from            time.Time
			sales           int
		}{
			{"the tenant's days", "", now.In(mustZone("America/Sao_Paulo")).Format(time.DateOnly), now.Add(-24 * time.Hour), 2},
			{"another time zone", "Asia/Tokyo", now.In(mustZone("Asia/Tokyo")).Format(time.DateOnly), now.Add(-24 * time.Hour), 2},
			{"a period after the sales", "", "", now.Add(time.Minute), 0},
		} {
			days, err := e.app.Insights.PointsSpentByStoreDay(e.ctx, c.from, now.Add(24*time.Hour), c.zone)
			require.NoError(t, err, c.name)
			if c.sales == 0 {
				require.Empty(t, days, c.name)
				continue
			}
			require.Len(t, days, 1, c.name)
			d := days[0]
			require.Equal(t, []any{"LOJA-01", c.day, 2, int64(375), "3.75"},
				[]any{d.Store.Code, d.Day, d.Sales, d.Points, d.Amount.StringFixed(2)}, c.name)
			require.True(t, d.Amount.Equal(d.Amount.Round(2)), "exact cents")
		}
	})
}
