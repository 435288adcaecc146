package insights_test

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/apptest"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/insights"
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// TestLiabilityWithDebt: a return after the points were spent takes what
// the balance holds and leaves the rest owed; the liability by day is the
// balances, from the rollups as from the ledger's rows, on the day the debt
// is made and on the day a credit settles it.
func TestLiabilityWithDebt(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		now := time.Date(2026, 3, 10, 15, 0, 0, 0, time.UTC) // noon in São Paulo, the tenant's zone
		env := apptest.New(t, db, apptest.WithClock(func() time.Time { return now }))
		a, ctx := env.App, env.Ctx
		c, err := a.Customers.CreateCustomer(ctx, customers.CustomerInput{Name: opt.Of("Ana"), Email: opt.Of("ana@example.com"), CPF: opt.Of("52998224725")})
		require.NoError(t, err)
		balance := func() int64 {
			got, err := db.Ent.Customer.Get(ctx, c.ID)
			require.NoError(t, err)
			return got.PointsBalance
		}
		reais := func(n int64) *decimal.Decimal { return opt.Of(decimal.NewFromInt(n)).Ptr() }

		var want []int64 // the balance at the end of each day
		for _, step := range []func(){
			func() {
				_, err = a.Loyalty.CreditPoints(ctx, loyalty.CreditInput{CustomerID: c.ID, OrderID: "ped-1", Amount: reais(100)})
			},
			func() {
				_, err = a.Loyalty.DebitPoints(ctx, loyalty.DebitInput{CustomerID: c.ID, Points: balance() - 20, Reason: "troca"})
			},
			func() { // takes the 20 left, owes the rest
				_, err = a.Loyalty.ReversePoints(ctx, loyalty.ReverseInput{CustomerID: c.ID, OrderID: "ped-1", ReversalID: "dev-1",
					Amount: reais(100), Reason: "devolução"})
			},
			func() {
				_, err = a.Loyalty.CreditPoints(ctx, loyalty.CreditInput{CustomerID: c.ID, OrderID: "ped-2", Amount: reais(50)})
			},
			func() {
				_, err = a.Loyalty.CreditPoints(ctx, loyalty.CreditInput{CustomerID: c.ID, OrderID: "ped-3", Amount: reais(500)})
			},
		} {
			step()
			require.NoError(t, err)
			want = append(want, balance())
			now = now.AddDate(0, 0, 1)
		}
		require.Zero(t, want[2], "the return emptied the balance")
		require.Zero(t, want[3], "the second order settled part of the debt")
		require.Positive(t, want[4], "the third settled the rest")

		from := time.Date(2026, 3, 10, 3, 0, 0, 0, time.UTC) // midnight in São Paulo
		to := from.AddDate(0, 0, len(want))
		fromRollups, err := a.Insights.PointsLiabilityByDay(ctx, from, to, "")
		require.NoError(t, err)
		fromRows, err := a.Insights.PointsLiabilityByDayFromLedger(ctx, from, to, "America/Sao_Paulo")
		require.NoError(t, err)
		require.Equal(t, fromRows, fromRollups)
		for i, d := range fromRollups {
			require.Equal(t, insights.DayPoints{Day: from.AddDate(0, 0, i).In(time.FixedZone("BRT", -3*3600)).Format(time.DateOnly), Points: want[i]}, d)
		}
	})
}
