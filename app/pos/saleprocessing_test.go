package pos_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/apptest"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/pos"
	"github.com/fideliza/fideliza/domain/document"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/sale"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// TestSaleProcessingInGroups: the processing jobs worked at the same moment
// are processed together, their sales marked PROCESSED by a statement per
// group rather than one a sale; each sale still credits its points once,
// and a sale that cannot be processed fails alone (FAILED after its last
// attempt), the sales of its group processed all the same. Worked again,
// nothing moves.
func TestSaleProcessingInGroups(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		env := apptest.New(t, db, apptest.WithTenant("Mercado Lotes"), apptest.WithStore("LOJA-01", "Loja Centro"))
		a, ctx := env.App, env.Ctx
		sys := viewer.SystemContext(context.Background())
		const shoppers, salesEach = 12, 3
		var cpfs, customerIDs []string
		for i := range shoppers {
			cpf := document.CPFOf(710_000_000 + i)
			c, err := a.Customers.CreateCustomer(ctx, customers.CustomerInput{Name: opt.Of(fmt.Sprint("Cliente ", i)), Email: opt.Of(fmt.Sprintf("c%d@lotes.example", i)), CPF: opt.Of(cpf)})
			require.NoError(t, err)
			cpfs, customerIDs = append(cpfs, cpf), append(customerIDs, c.ID)
		}
		soldAt := time.Now().Add(-time.Minute)
		one := decimal.NewFromInt(1)
		receipt := 0
		register := func(cpf string, price decimal.Decimal) string {
			t.Helper()
			receipt++
			s, err := a.POS.RegisterSale(ctx, pos.SaleInput{
				Protocol: "PARTNER_V1", Customer: &pos.POSCustomer{ID: cpf, Type: "CPF"}, SaleID: fmt.Sprint(receipt),
				StoreID: "LOJA-01", PosID: "PDV-1", Channel: "STORE", Date: &soldAt, Amount: &price, AmountPayable: &price,
				Items:    []pos.SaleItemInput{{ID: "1", GTIN: "7891000100103", Description: "Café", UnitPrice: &price, Quantity: &one}},
				Payments: []pos.SalePaymentInput{{ID: "1", Amount: &price, Method: "PIX"}},
			})
			require.NoError(t, err)
			return s.ID
		}
		var good []string
		for j := range salesEach {
			for i, cpf := range cpfs {
				good = append(good, register(cpf, decimal.NewFromInt(int64(10+i+j))))
			}
		}
		first, second := good[:2*shoppers], good[2*shoppers:]

		work := func(ids ...string) (marks int32, errs map[string]error) {
			var n atomic.Int32
			stop := db.Trace(func(q string) {
				if strings.HasPrefix(q, "UPDATE sales SET status") {
					n.Add(1)
				}
			})
			defer stop()
			var mu sync.Mutex
			errs = map[string]error{}
			start := make(chan struct{})
			var wg sync.WaitGroup
			last := jobs.WithAttempt(sys, jobs.Attempt{N: 1, Max: 1}) // a failure is final
			for _, id := range ids {
				wg.Go(func() {
					<-start
					err := a.POS.ProcessSale(last, jobs.ProcessSale{TenantID: env.TenantID, SaleID: id})
					mu.Lock()
					errs[id] = err
					mu.Unlock()
				})
			}
			close(start)
			wg.Wait()
			return n.Load(), errs
		}
		balances := func() map[string]int64 {
			out := map[string]int64{}
			for _, id := range customerIDs {
				c, err := db.Ent.Customer.Get(sys, id)
				require.NoError(t, err)
				out[id] = c.PointsBalance + c.PointsPending
			}
			return out
		}

		marks, errs := work(first...)
		for _, id := range first {
			require.NoError(t, errs[id], "sale %s", id)
		}
		require.Less(t, int(marks), len(first)/2, "the sales were marked processed in groups")

		// A sale whose stored discounts cannot be read fails, alone: its
		// group is processed again one sale per transaction.
		bad := register(cpfs[0], decimal.NewFromInt(50))
		_, err := db.SQL.Exec(`UPDATE sale_items SET discounts = $1 WHERE sale_id = $2`, `{"not": "a list"}`, bad)
		require.NoError(t, err)
		_, errs = work(append(second, bad)...)
		require.ErrorContains(t, errs[bad], "unreadable stored discounts")
		for _, id := range second {
			require.NoError(t, errs[id], "sale %s", id)
		}
		failed, err := db.Ent.Sale.Get(sys, bad)
		require.NoError(t, err)
		require.Equal(t, sale.StatusFAILED, failed.Status)
		credited := map[string]int64{}
		for _, id := range good {
			s, err := db.Ent.Sale.Get(sys, id)
			require.NoError(t, err)
			require.Equal(t, sale.StatusPROCESSED, s.Status)
			require.NotNil(t, s.ProcessedAt)
			require.NotNil(t, s.CustomerID)
			require.Positive(t, s.PointsCredited)
			credits, err := db.Ent.PointsEntry.Query().Where(pointsentry.SourceID(id), pointsentry.KindEQ(pointsentry.KindCredit)).Count(sys)
			require.NoError(t, err)
			require.Equal(t, 1, credits, "sale %s credited once", id)
			credited[*s.CustomerID] += s.PointsCredited
		}
		before := balances()
		require.Equal(t, credited, before, "each balance is its sales' points")

		_, errs = work(good...)
		for _, err := range errs {
			require.NoError(t, err)
		}
		require.Equal(t, before, balances(), "worked again, nothing moved")
	})
}
