package scoring_test

import (
	"bufio"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/apptest"
	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/pos"
	"github.com/fideliza/fideliza/domain/churn"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/ent/customerscore"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// cdnowPurchase is a line of the CDNOW sample: a customer's purchase.
type cdnowPurchase struct {
	customer string
	at       time.Time
	amount   decimal.Decimal
}

func cdnowPurchases(t *testing.T) []cdnowPurchase {
	t.Helper()
	f, err := os.Open("../../testdata/cdnow/cdnow_sample.txt")
	require.NoError(t, err)
	defer f.Close()
	var out []cdnowPurchase
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cols := strings.Fields(sc.Text())
		require.Len(t, cols, 5)
		at, err := time.Parse("20060102", cols[2])
		require.NoError(t, err)
		amount, err := decimal.NewFromString(cols[4])
		require.NoError(t, err)
		out = append(out, cdnowPurchase{customer: cols[0], at: at, amount: amount})
	}
	require.NoError(t, sc.Err())
	return out
}

func cdnowWithin(t *testing.T, want, got, tolerance float64, what string) {
	t.Helper()
	require.LessOrEqualf(t, math.Abs(got-want)/want, tolerance, "%s: %.5f, published %.5f", what, got, want)
}

// TestChurnModelFromSales loads the CDNOW sample (testdata/cdnow at the top of the repository) as POS
// sales of a tenant, through registration and processing, fits the tenant's model to the 39-week
// calibration period ending 1997-09-30, and compares it with the published
// figures: r, α, a and b within 1%, the conditional expectation 1.226 and
// E[X(t)] within 0.5%. Then it scores every customer.
func TestChurnModelFromSales(t *testing.T) {
	if testing.Short() {
		t.Skip("registers and processes 6,919 sales; skipped with -short")
	}
	t.Parallel()
	purchases := cdnowPurchases(t)
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		t.Parallel()
		started := time.Now()
		calibrationEnd := time.Date(1997, 9, 30, 0, 0, 0, 0, time.UTC)
		env := apptest.New(t, db, apptest.WithClock(func() time.Time { return calibrationEnd }), apptest.WithTenant("CDNOW"),
			apptest.WithTenantSettings(backoffice.TenantSettings{TimeZone: opt.Of("UTC").Ptr()}), // the data's days are UTC days
			apptest.WithStore("CDNOW", "CDNOW"))
		a, ctx := env.App, env.Ctx

		cpfs := map[string]string{}
		for _, p := range purchases {
			if _, ok := cpfs[p.customer]; ok {
				continue
			}
			cpfs[p.customer] = apptest.CPF(100000 + len(cpfs))
			_, err := a.Customers.CreateCustomer(ctx, customers.CustomerInput{Name: opt.Of("Cliente " + p.customer),
				Email: opt.Of("cdnow" + p.customer + "@example.com"), CPF: opt.Of(cpfs[p.customer])})
			require.NoError(t, err)
		}
		require.Len(t, cpfs, 2357)

		// Registered eight at a time, as points of sale would (the group
		// commit at work), then processed a day at a time in one group each,
		// as the demo's year processes a day's sales at closing (the
		// worker's path is worker's tests').
		one := decimal.NewFromInt(1)
		saleIDs := make([]string, len(purchases))
		next := make(chan int)
		errs := make(chan error, 8)
		for range 8 {
			go func() {
				var failed error
				for i := range next {
					if failed != nil {
						continue // drain: the sender never blocks
					}
					p := purchases[i]
					// A purchase of US$ 0.00 is a purchase all the same; a
					// sale is never of nothing.
					amount := decimal.Max(p.amount, decimal.New(1, -2))
					at := p.at
					s, err := a.POS.RegisterSale(ctx, pos.SaleInput{
						Protocol: "PARTNER_V1", Customer: &pos.POSCustomer{ID: cpfs[p.customer], Type: "CPF"},
						SaleID: fmt.Sprint(i + 1), StoreID: "CDNOW", PosID: "WEB", Channel: "ecommerce", Date: &at,
						Amount: &amount, AmountPayable: &amount,
						Items:    []pos.SaleItemInput{{ID: "1", GTIN: "0000000000000", Description: "CDs", UnitPrice: &amount, Quantity: &one}},
						Payments: []pos.SalePaymentInput{{ID: "1", Amount: &amount, Method: "CARD"}},
					})
					if err != nil {
						failed = fmt.Errorf("purchase %d: %w", i, err)
						continue
					}
					saleIDs[i] = s.ID
				}
				errs <- failed
			}()
		}
		for i := range purchases {
			next <- i
		}
		close(next)
		for range 8 {
			require.NoError(t, <-errs)
		}
		byDay := map[time.Time][]string{}
		for i, p := range purchases {
			byDay[p.at] = append(byDay[p.at], saleIDs[i])
		}
		for _, day := range slices.SortedFunc(maps.Keys(byDay), time.Time.Compare) {
			require.NoError(t, a.POS.ProcessSales(ctx, byDay[day]...), day)
		}
		t.Logf("%d sales registered and processed in %v", len(purchases), time.Since(started).Round(time.Millisecond))

		m, err := a.Scoring.FitChurnModel(ctx, calibrationEnd)
		require.NoError(t, err)
		t.Logf("r=%.4f α=%.4f a=%.4f b=%.4f LL=%.2f over %d customers", m.R, m.Alpha, m.A, m.B, m.LogLikelihood, m.Customers)
		require.Equal(t, 2357, m.Customers)
		cdnowWithin(t, 0.243, m.R, 0.01, "r")
		cdnowWithin(t, 4.414, m.Alpha, 0.01, "α")
		cdnowWithin(t, 0.793, m.A, 0.01, "a")
		cdnowWithin(t, 2.426, m.B, 0.01, "b")
		p := churn.Params{R: m.R, Alpha: m.Alpha, A: m.A, B: m.B}
		cdnowWithin(t, 1.226, p.ExpectedPurchases(churn.History{X: 2, Tx: 30.43, T: 38.86}, 39), 0.005, "E[Y(39) | 2, 30.43, 38.86]")
		for week, want := range map[float64]float64{1: 0.0532, 3: 0.1506, 32: 1.0437, 78: 1.8576} {
			cdnowWithin(t, want, p.ExpectedPurchasesFromNew(week), 0.005, fmt.Sprintf("E[X(%v)]", week))
		}

		atRisk := `churn_risk == "high"`
		audience, err := a.Customers.CreateSegment(ctx, customers.SegmentInput{Name: opt.Of("Em risco").Ptr(), Rule: &atRisk})
		require.NoError(t, err)
		n, err := a.Scoring.ScoreCustomers(ctx, calibrationEnd)
		require.NoError(t, err)
		require.Equal(t, 2357, n)
		byRisk := map[customerscore.Risk]int{}
		scores, err := db.Ent.CustomerScore.Query().All(ctx)
		require.NoError(t, err)
		for _, s := range scores {
			byRisk[s.Risk]++
			require.NotNil(t, s.PAlive)
			require.InDelta(t, 0.5, *s.PAlive, 0.5)
		}
		t.Logf("risks %v; %v in all", byRisk, time.Since(started).Round(time.Millisecond))
		require.Zero(t, byRisk[customerscore.RiskUnknown], "every customer bought in the calibration period")
		members, err := audience.QueryCustomers().Count(ctx)
		require.NoError(t, err)
		require.Equal(t, byRisk[customerscore.RiskHigh], members, "an audience over churn risk is current once the tenant is scored")
		for _, r := range []customerscore.Risk{customerscore.RiskLow, customerscore.RiskMedium, customerscore.RiskHigh} {
			require.Positive(t, byRisk[r], "some customers are at %s risk", r)
		}
	})
}
