package rest

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/event"
	"github.com/fideliza/fideliza/ent/redemption"
	"github.com/fideliza/fideliza/ent/saleitem"
	"github.com/fideliza/fideliza/ent/salereturn"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/worker"
)

// posReturnBody is a return of the given units (line id, quantity) of a
// sale of posStore.
func posReturnBody(id string, lines ...string) map[string]any {
	items := []any{}
	for i := 0; i+1 < len(lines); i += 2 {
		items = append(items, map[string]any{"id": lines[i], "quantity": posN(lines[i+1])})
	}
	return map[string]any{"protocol": "PARTNER_V1", "return": map[string]any{
		"id": id, "store": map[string]any{"id": posStore, "posId": "PDV-01"}, "date": posDate, "reason": "defeito",
		"items": items,
	}}
}

func posCancellationBody(id string) map[string]any {
	return map[string]any{"protocol": "PARTNER_V1", "cancellation": map[string]any{
		"id": id, "store": map[string]any{"id": posStore, "posId": "PDV-01"}, "date": posDate, "reason": "desistência",
	}}
}

// posWorkReturns runs every process_sale_return job as River would hand it
// over, and returns the errors of those that did not finish.
func posWorkReturns(t testing.TB, e *posEnv) []error {
	t.Helper()
	list := posJobRows[jobs.ProcessSaleReturn](t, e)
	var errs []error
	for _, j := range list {
		w := worker.For[jobs.ProcessSaleReturn](app.New(&app.Config{DB: e.db, Clock: time.Now}))
		err := w.Work(context.Background(), &river.Job[jobs.ProcessSaleReturn]{
			JobRow: &rivertype.JobRow{ID: j.id, Kind: jobs.ProcessSaleReturn{}.Kind(), Attempt: 1, MaxAttempts: 25},
			Args:   j.args,
		})
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

func (e *posEnv) posSale(t testing.TB, receipt string) map[string]any {
	t.Helper()
	r := e.posGet(t, "/sales/"+receipt+"?storeId="+posStore)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	return r.obj(t)["sale"].(map[string]any)
}

func (e *posEnv) posBalance(t testing.TB, customerID string) (balance, debt int64, ltv string) {
	t.Helper()
	c, err := e.db.Ent.Customer.Get(posSys(), customerID)
	require.NoError(t, err)
	return c.PointsBalance, c.PointsDebt, c.LifetimeValue.String()
}

func (e *posEnv) posEvents(t testing.TB, typ string) []*ent.Event {
	t.Helper()
	evs, err := e.db.Ent.Event.Query().Where(event.Type(typ)).Order(ent.Asc(event.FieldCreatedAt)).All(posSys())
	require.NoError(t, err)
	return evs
}

// TestPOSReturns: a partial return takes back points in proportion to the
// net value returned; a cancellation takes the rest, the points already
// spent becoming a debt that blocks spending until the next credit settles
// it; the same id again is the same return; more than remains returnable,
// an unknown item or sale, or nothing left to cancel are refused.
func TestPOSReturns(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db)
		doc := posCPF()
		cust := e.posCustomer(t, doc, posCust{name: "Ana Souza"})
		ctx := e.posTenantCtx()
		// R$ 100.00: line 1 is 2 × R$ 25.00, line 2 is 4 × R$ 12.50.
		posRequireAccepted(t, e.posPost(t, "/sales", posSaleBody(posN("700"), map[string]any{"id": doc, "type": "CPF"})),
			"700", map[string]any{"id": doc, "type": "CPF"})
		posWork(t, e, e.posSaleID(t, "700"))
		_, err := e.app.Loyalty.DebitPoints(ctx, loyalty.DebitInput{CustomerID: cust.ID, Points: 60, Reason: "resgate"})
		require.NoError(t, err)

		r := e.posPost(t, "/sales/700/returns", posReturnBody("R-1", "1", "1"))
		require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
		got := r.obj(t)["return"].(map[string]any)
		require.Equal(t, "R-1", got["id"])
		require.Equal(t, "RECEIVED", got["status"])
		require.Equal(t, posN("25"), got["amount"])
		returnID := got["returnId"].(string)
		require.Empty(t, posWorkReturns(t, e))

		sl := e.posSale(t, "700")
		require.Equal(t, "PARTIALLY_RETURNED", sl["status"])
		require.Equal(t, posN("25"), sl["pointsReversed"], "100 points on R$ 100, R$ 25 back: 25 points")
		returns := sl["returns"].([]any)
		require.Len(t, returns, 1)
		require.Equal(t, "PROCESSED", returns[0].(map[string]any)["status"])
		balance, debt, ltv := e.posBalance(t, cust.ID)
		require.Equal(t, [2]int64{15, 0}, [2]int64{balance, debt})
		require.Equal(t, "75", ltv)

		t.Run("the same id again is the same return", func(t *testing.T) {
			r := e.posPost(t, "/sales/700/returns", posReturnBody("R-1", "1", "1"))
			require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
			require.Equal(t, returnID, r.obj(t)["return"].(map[string]any)["returnId"])
			require.Empty(t, posWorkReturns(t, e))
			require.Equal(t, posN("25"), e.posSale(t, "700")["pointsReversed"])
		})

		refused := []struct {
			name, path string
			body       map[string]any
			status     int
			problem    string
			fields     []string
		}{
			{"more units than remain", "/sales/700/returns", posReturnBody("R-2", "1", "2"), http.StatusUnprocessableEntity, "validation-error", []string{"return.items[0].quantity"}},
			{"an item the sale has not", "/sales/700/returns", posReturnBody("R-3", "9", "1"), http.StatusUnprocessableEntity, "validation-error", []string{"return.items[0].id"}},
			{"a zero quantity", "/sales/700/returns", posReturnBody("R-4", "2", "0"), http.StatusBadRequest, "validation-error", []string{"return.items[0].quantity"}},
			{"no items", "/sales/700/returns", posReturnBody("R-5"), http.StatusBadRequest, "validation-error", []string{"return.items"}},
			{"an item twice", "/sales/700/returns", posReturnBody("R-6", "2", "1", "2", "1"), http.StatusBadRequest, "validation-error", []string{"return.items[1].id"}},
			{"another protocol", "/sales/700/returns", posSet(posReturnBody("R-7", "2", "1"), "protocol", "PARTNER"), http.StatusBadRequest, "validation-error", []string{"protocol"}},
			{"no id", "/sales/700/cancellation", posDelete(posCancellationBody(""), "cancellation.id"), http.StatusBadRequest, "validation-error", []string{"cancellation.id"}},
			{"a cancellation listing items", "/sales/700/cancellation", posSet(posCancellationBody("C-9"), "cancellation.items", []any{}), http.StatusBadRequest, "validation-error", []string{"cancellation.items"}},
			{"an unknown sale", "/sales/999/returns", posReturnBody("R-8", "1", "1"), http.StatusNotFound, "resource-not-found", nil},
			{"an unknown store", "/sales/700/returns", posSet(posReturnBody("R-9", "1", "1"), "return.store.id", "NOPE"), http.StatusNotFound, "resource-not-found", nil},
		}
		for _, c := range refused {
			t.Run(c.name, func(t *testing.T) {
				posRequireProblem(t, e.posPost(t, c.path, c.body), c.status, c.problem, c.fields...)
			})
		}

		r = e.posPost(t, "/sales/700/cancellation", posCancellationBody("C-1"))
		require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
		require.Equal(t, posN("75"), r.obj(t)["cancellation"].(map[string]any)["amount"])
		require.Empty(t, posWorkReturns(t, e))
		sl = e.posSale(t, "700")
		require.Equal(t, "CANCELLED", sl["status"])
		require.Equal(t, posN("100"), sl["pointsReversed"])
		balance, debt, ltv = e.posBalance(t, cust.ID)
		require.Equal(t, [2]int64{0, 60}, [2]int64{balance, debt}, "15 points taken, the 60 already spent owed")
		require.Equal(t, "0", ltv)

		t.Run("nothing left to cancel", func(t *testing.T) {
			posRequireProblem(t, e.posPost(t, "/sales/700/cancellation", posCancellationBody("C-2")),
				http.StatusUnprocessableEntity, "validation-error", "cancellation")
		})

		_, err = e.app.Loyalty.DebitPoints(ctx, loyalty.DebitInput{CustomerID: cust.ID, Points: 1, Reason: "resgate"})
		require.Equal(t, "insufficient_points", posErrCode(err), "nothing is spent while a debt is open")

		// The next sale's 100 points settle the debt first.
		posRequireAccepted(t, e.posPost(t, "/sales", posSaleBody(posN("701"), map[string]any{"id": doc, "type": "CPF"})),
			"701", map[string]any{"id": doc, "type": "CPF"})
		posWork(t, e, e.posSaleID(t, "701"))
		balance, debt, _ = e.posBalance(t, cust.ID)
		require.Equal(t, [2]int64{40, 0}, [2]int64{balance, debt})

		require.Len(t, e.posEvents(t, "sale.returned"), 1)
		cancelled := e.posEvents(t, "sale.cancelled")
		require.Len(t, cancelled, 1)
		require.EqualValues(t, 75, cancelled[0].Data["points_reversed"])
		reversed := e.posEvents(t, "points.reversed")
		require.Len(t, reversed, 2)
		require.EqualValues(t, 60, reversed[1].Data["debt_after"])
	})
}

// posErrCode is the code of an operation's error.
func posErrCode(err error) string {
	if e, ok := apperr.As(err); ok {
		return e.Code
	}
	return ""
}

// TestPOSReturnBeforeProcessing: a return received before its sale is
// processed waits for it, then is applied once, in order.
func TestPOSReturnBeforeProcessing(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db)
		doc := posCPF()
		cust := e.posCustomer(t, doc, posCust{name: "Ana Souza"})
		posRequireAccepted(t, e.posPost(t, "/sales", posSaleBody(posN("710"), map[string]any{"id": doc, "type": "CPF"})),
			"710", map[string]any{"id": doc, "type": "CPF"})
		require.Equal(t, http.StatusAccepted, e.posPost(t, "/sales/710/returns", posReturnBody("R-1", "2", "2")).status)
		require.Equal(t, http.StatusAccepted, e.posPost(t, "/sales/710/returns", posReturnBody("R-2", "2", "2")).status)
		errs := posWorkReturns(t, e)
		require.Len(t, errs, 2)
		for _, err := range errs {
			var snooze *river.JobSnoozeError
			require.ErrorAs(t, err, &snooze, "waits for the sale")
		}
		require.Equal(t, "RECEIVED", e.posSale(t, "710")["status"])

		posWork(t, e, e.posSaleID(t, "710"))
		require.Empty(t, posWorkReturns(t, e))
		sl := e.posSale(t, "710")
		require.Equal(t, "PARTIALLY_RETURNED", sl["status"])
		require.Equal(t, posN("50"), sl["pointsReversed"])
		balance, debt, _ := e.posBalance(t, cust.ID)
		require.Equal(t, [2]int64{50, 0}, [2]int64{balance, debt})
		returns := sl["returns"].([]any)
		require.Equal(t, "R-1", returns[0].(map[string]any)["id"], "in the order received")
		require.Equal(t, posN("25"), returns[0].(map[string]any)["pointsReversed"])
	})
}

// TestPOSReturnReleasesRedemption: each returned unit gives its discount
// back to the campaign's budget; once every unit carrying a campaign's
// discount is back, the sale's redemption of it is rolled back (giving back
// only the rest) and the campaign's count gets it back.
func TestPOSReturnReleasesRedemption(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db)
		doc := posCPF()
		cust := e.posCustomer(t, doc, posCust{name: "Ana Souza"})
		camp := e.posCampaign(t, campaigns.CampaignInput{Name: "Dez por cento", Channels: []string{"pdv"},
			Discount: &campaigns.DiscountInput{Mode: "percentage", Value: posDecPtr("10")}, Budget: &campaigns.BudgetInput{Total: posDecPtr("100")}})
		for _, receipt := range []string{"720", "721"} { // R$ 10 of discount each
			body := posDiscounted(posSaleBody(posN(receipt), map[string]any{"id": doc, "type": "CPF"}), camp)
			posRequireAccepted(t, e.posPost(t, "/sales", body), receipt, map[string]any{"id": doc, "type": "CPF"})
			posWork(t, e, e.posSaleID(t, receipt))
		}
		count := func() int {
			c, err := e.db.Ent.Campaign.Get(posSys(), camp)
			require.NoError(t, err)
			return c.RedemptionsCount
		}
		spent := func() string {
			c, err := e.db.Ent.Campaign.Get(posSys(), camp)
			require.NoError(t, err)
			return c.BudgetSpent.StringFixed(2)
		}
		require.Equal(t, 2, count())
		require.Equal(t, "20.00", spent())

		require.Equal(t, http.StatusAccepted, e.posPost(t, "/sales/720/returns", posReturnBody("R-1", "1", "1")).status)
		require.Empty(t, posWorkReturns(t, e))
		require.Equal(t, 2, count(), "one discounted unit is still kept")
		require.Equal(t, "15.00", spent(), "a returned unit gives its R$ 5 of discount back to the budget")
		// R$ 90 paid (line 1: 2 × R$ 25 less R$ 10): one unit back is R$ 20.
		require.Equal(t, posN("20"), e.posSale(t, "720")["pointsReversed"])

		require.Equal(t, http.StatusAccepted, e.posPost(t, "/sales/720/returns", posReturnBody("R-2", "1", "1")).status)
		require.Empty(t, posWorkReturns(t, e))
		require.Equal(t, 1, count(), "every discounted unit of 720 is back")
		require.Equal(t, "10.00", spent(), "the rollback gives back only what the first return did not")
		red, err := e.db.Ent.Redemption.Query().Where(redemption.CustomerID(cust.ID), redemption.OrderID("720")).Only(posSys())
		require.NoError(t, err)
		require.NotNil(t, red.RolledBackAt)
		require.Len(t, e.posEvents(t, "redemption.rolled_back"), 1)
	})
}

// TestPOSReturnsConcurrently: 100 identical cancellations at once are one
// cancellation; 50 concurrent returns of one unit of a 10-unit line return
// 10 units; a return racing its sale's processing is applied once, after
// it.
func TestPOSReturnsConcurrently(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db, unlimitedRates)
		doc := posCPF()
		cust := e.posCustomer(t, doc, posCust{name: "Ana Souza"})
		sell := func(receipt string, units int) {
			t.Helper()
			body := posSaleBody(posN(receipt), map[string]any{"id": doc, "type": "CPF"})
			total := posN(strconv.Itoa(10 * units))
			posSet(body, "sale.items", []any{map[string]any{"id": "1", "gtin": posGTINA, "description": "Café",
				"unitPrice": posN("10"), "quantity": posN(strconv.Itoa(units))}})
			posSet(body, "sale.amount", total)
			posSet(body, "sale.amountPayable", total)
			posSet(body, "sale.payments.0.amount", total)
			require.Equal(t, http.StatusAccepted, e.posPost(t, "/sales", body).status)
		}
		parallel := func(n int, fn func(i int) int) map[int]int {
			var mu sync.Mutex
			statuses := map[int]int{}
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					s := fn(i)
					mu.Lock()
					statuses[s]++
					mu.Unlock()
				}()
			}
			wg.Wait()
			return statuses
		}

		t.Run("100 identical cancellations", func(t *testing.T) {
			sell("730", 3)
			posWork(t, e, e.posSaleID(t, "730"))
			statuses := parallel(100, func(int) int { return e.posPost(t, "/sales/730/cancellation", posCancellationBody("C-1")).status })
			require.Equal(t, map[int]int{http.StatusAccepted: 100}, statuses)
			require.Empty(t, posWorkReturns(t, e))
			n, err := e.db.Ent.SaleReturn.Query().Where(salereturn.ExternalID("C-1")).Count(posSys())
			require.NoError(t, err)
			require.Equal(t, 1, n)
			require.Equal(t, posN("30"), e.posSale(t, "730")["pointsReversed"])
		})

		t.Run("50 returns of one unit of a 10-unit line", func(t *testing.T) {
			sell("731", 10)
			posWork(t, e, e.posSaleID(t, "731"))
			statuses := parallel(50, func(i int) int {
				return e.posPost(t, "/sales/731/returns", posReturnBody("R-"+strconv.Itoa(i), "1", "1")).status
			})
			require.Equal(t, map[int]int{http.StatusAccepted: 10, http.StatusUnprocessableEntity: 40}, statuses)
			require.Empty(t, posWorkReturns(t, e))
			it, err := e.db.Ent.SaleItem.Query().Where(saleitem.SaleID(e.posSaleID(t, "731"))).Only(posSys())
			require.NoError(t, err)
			require.Equal(t, "10", it.ReturnedQuantity.String())
			sl := e.posSale(t, "731")
			require.Equal(t, "RETURNED", sl["status"])
			require.Equal(t, posN("100"), sl["pointsReversed"])
		})

		t.Run("a return racing its sale's processing", func(t *testing.T) {
			sell("732", 4)
			require.Equal(t, http.StatusAccepted, e.posPost(t, "/sales/732/returns", posReturnBody("R-1", "1", "1")).status)
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				posWork(t, e, e.posSaleID(t, "732"))
			}()
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
				if errs := posWorkReturns(t, e); len(errs) == 0 {
					break
				}
			}
			wg.Wait()
			require.Empty(t, posWorkReturns(t, e))
			sl := e.posSale(t, "732")
			require.Equal(t, "PARTIALLY_RETURNED", sl["status"])
			require.Equal(t, posN("10"), sl["pointsReversed"])
		})

		balance, debt, _ := e.posBalance(t, cust.ID)
		require.Equal(t, [2]int64{30, 0}, [2]int64{balance, debt}, "30 + 100 + 40 credited, 30 + 100 + 10 reversed")
	})
}
