package demoyear_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/apptest"
	"github.com/fideliza/fideliza/app/pos"
	"github.com/fideliza/fideliza/demoyear"
	"github.com/fideliza/fideliza/demoyear/demotest"
	"github.com/fideliza/fideliza/domain/experiment"
	"github.com/fideliza/fideliza/ent/campaign"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/redemption"
	"github.com/fideliza/fideliza/ent/sale"
	"github.com/fideliza/fideliza/ent/salepayment"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// TestLivingDemoIsDeterministic: the demo loaded from the seed holds the
// same year on both databases until its experiment starts: the same
// customers, sales, redemptions and points movements, some of the sales
// paid in part with points at the till. From then on the club's treated
// customers (a hash of their ids, new on every play) get its discount and
// come more often: its lift is positive, its discounts given. The year is
// played once per database, day and code version, as the template every
// test of the year copies (demotest): this test is the generator's. The
// year ends today, as serve --demo's does, so its figures change with the
// day; the test holds them equal on both databases and within the sizes
// the guides describe.
func TestLivingDemoIsDeterministic(t *testing.T) {
	t.Parallel()
	end := demotest.Today()
	figures := map[string][5]int{}
	for _, d := range storagetest.Dialects() {
		db := demotest.Open(t, d, end)
		a := app.New(&app.Config{DB: db, Clock: func() time.Time { return end }})
		ctx := viewer.TenantContext(context.Background(), app.DemoTenantID)
		club, err := db.Ent.Campaign.Query().Where(campaign.HoldoutBasisPointsGT(0)).Only(ctx)
		require.NoError(t, err)
		before := club.StartsAt
		customers, err := db.Ent.Customer.Query().Count(ctx)
		require.NoError(t, err)
		sales, err := db.Ent.Sale.Query().Where(sale.SoldAtLT(before)).Count(ctx)
		require.NoError(t, err)
		redemptions, err := db.Ent.Redemption.Query().Where(redemption.CreatedAtLT(before)).Count(ctx)
		require.NoError(t, err)
		movements, err := db.Ent.PointsEntry.Query().Where(pointsentry.CreatedAtLT(before)).Count(ctx)
		require.NoError(t, err)
		paid, err := db.Ent.SalePayment.Query().Where(salepayment.Method(pos.MethodPoints), salepayment.HoldIDNotNil()).Count(ctx)
		require.NoError(t, err)
		spent, err := db.Ent.PointsEntry.Query().Where(pointsentry.KindEQ(pointsentry.KindDebit), pointsentry.SourceKindEQ(pointsentry.SourceKindSale)).Count(ctx)
		require.NoError(t, err)
		require.Equal(t, paid, spent, "every sale paid with points debited them once")
		require.Greater(t, paid, 100, "the year's tills take points")
		paidBefore, err := db.Ent.SalePayment.Query().Where(salepayment.Method(pos.MethodPoints), salepayment.HoldIDNotNil(),
			salepayment.HasSaleWith(sale.SoldAtLT(before))).Count(ctx)
		require.NoError(t, err)
		figures[d] = [5]int{customers, sales, redemptions, movements, paidBefore}
		t.Logf("%s: customers, and before the experiment sales, redemptions, points movements, sales paid with points: %v", d, figures[d])

		lift, err := a.Insights.CampaignLift(ctx, club)
		require.NoError(t, err)
		require.Equal(t, customers, lift.Treated.Customers+lift.HeldOut.Customers, "every customer is a target")
		require.True(t, lift.Discounts.IsPositive(), "the tills gave the club's discount")
		require.True(t, lift.RevenuePerCustomer.Difference.IsPositive() || !lift.RevenuePerCustomer.Significant,
			"the treated do not buy significantly less: %s", lift.Summary())
		require.NotEqual(t, experiment.NoBenefit, lift.Verdict)
		t.Logf("%s: %s", d, lift.Summary())
	}
	// The same year on both databases, of the sizes the guides describe.
	first := figures[storagetest.Dialects()[0]]
	for d, f := range figures {
		require.Equal(t, first, f, d)
	}
	for i, r := range livingDemoSizes {
		require.True(t, first[i] >= r[0] && first[i] <= r[1], "figure %d of %v outside %v", i, first, r)
	}
}

// livingDemoSizes bound the customers, and the sales, redemptions, points
// movements and sales paid with points before the experiment, of any day's
// year: on 25 November 2026 at 15:00 UTC they were 2004, 7881, 600, 10825
// and 676; the customers are the seed's, the rest follow the calendar.
var livingDemoSizes = [5][2]int{{2004, 2004}, {7000, 9000}, {500, 700}, {9500, 12500}, {550, 800}}

// TestHistoryLogsItsProgress: the history logs a line as each month is
// played, saying how much of it is (serve --demo's year takes a minute or
// more); here a sandbox's 90 days from 27 August.
func TestHistoryLogsItsProgress(t *testing.T) {
	t.Parallel()
	end := time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC)
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := apptest.New(t, db, apptest.WithClock(func() time.Time { return end }), apptest.WithHistory(demoyear.Play))
		var logs bytes.Buffer
		e.App.Log = slog.New(slog.NewJSONHandler(&logs, nil))
		require.NoError(t, e.App.Backoffice.SeedDemoTenant(viewer.SystemContext(context.Background()), e.TenantID))

		type progress struct {
			Msg, Tenant              string
			Percent, Days, Purchases int
			DaysPlayed               int `json:"days_played"`
		}
		var got []progress
		dec := json.NewDecoder(&logs)
		for dec.More() {
			var p progress
			require.NoError(t, dec.Decode(&p))
			if strings.HasPrefix(p.Msg, "demo history: ") {
				got = append(got, p)
			}
		}
		require.Len(t, got, 3, "a line a month")
		purchases := 0
		for i, want := range []struct {
			month               string
			daysPlayed, percent int
		}{{"August 2026", 5, 5}, {"September 2026", 35, 38}, {"October 2026", 66, 73}} {
			p := got[i]
			require.Equal(t, "demo history: "+want.month+" played", p.Msg)
			require.Equal(t, progress{Msg: p.Msg, Tenant: e.TenantID, Percent: want.percent, DaysPlayed: want.daysPlayed,
				Days: 90, Purchases: p.Purchases}, p)
			require.Greater(t, p.Purchases, purchases, "purchases so far, after %s", want.month)
			purchases = p.Purchases
		}
	})
}
