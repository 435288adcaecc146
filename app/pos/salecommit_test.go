package pos_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/apptest"
	"github.com/fideliza/fideliza/app/pos"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// TestSaleGroupCommit: sales registered concurrently are committed in
// groups, and still each receipt is stored once with its lines and its one
// job, every request for it (sent twice at once, so often in one group)
// answered with the same sale, and a sale refused alone (an unknown store)
// failing no other.
func TestSaleGroupCommit(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		env := apptest.New(t, db, apptest.WithTenant("Mercado Grupo"), apptest.WithStore("LOJA-01", "Loja Centro"))
		a, ctx := env.App, env.Ctx
		soldAt := time.Now().Add(-time.Minute)
		amount, one := decimal.RequireFromString("15.00"), decimal.NewFromInt(1)
		coffee, sugar := decimal.RequireFromString("12.50"), decimal.RequireFromString("2.50")
		register := func(receipt int, store string) (string, error) {
			s, err := a.POS.RegisterSale(ctx, pos.SaleInput{
				Protocol: "PARTNER_V1", SaleID: fmt.Sprint(receipt), StoreID: store, PosID: "PDV-1", Channel: "STORE",
				Date: &soldAt, Amount: &amount, AmountPayable: &amount,
				Items: []pos.SaleItemInput{{ID: "1", GTIN: "7891000100103", Description: "Café", UnitPrice: &coffee, Quantity: &one},
					{ID: "2", GTIN: "7891000100104", Description: "Açúcar", UnitPrice: &sugar, Quantity: &one}},
				Payments: []pos.SalePaymentInput{{ID: "1", Amount: &amount, Method: "PIX"}},
			})
			if err != nil {
				return "", err
			}
			return s.ID, nil
		}
		const receipts, copies = 150, 2
		answers := make([][copies]string, receipts)
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make(chan error, receipts*copies+10)
		for r := range receipts {
			for c := range copies {
				wg.Go(func() {
					<-start
					id, err := register(r, "LOJA-01")
					answers[r][c] = id
					if err != nil {
						errs <- err
					}
				})
			}
		}
		for range 10 { // sales no group may store: their store does not exist
			wg.Go(func() {
				<-start
				if _, err := register(9999, "LOJA-NONE"); err == nil {
					errs <- fmt.Errorf("a sale of an unknown store was stored")
				}
			})
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		for r, ids := range answers {
			require.NotEmpty(t, ids[0], "receipt %d answered", r)
			require.Equal(t, ids[0], ids[1], "both requests for receipt %d answered with one sale", r)
		}
		var sales, lines, payments, jobs int
		require.NoError(t, db.SQL.QueryRow(`SELECT count(*) FROM sales`).Scan(&sales))
		require.NoError(t, db.SQL.QueryRow(`SELECT count(*) FROM sale_items`).Scan(&lines))
		require.NoError(t, db.SQL.QueryRow(`SELECT count(*) FROM sale_payments`).Scan(&payments))
		require.NoError(t, db.SQL.QueryRow(`SELECT count(*) FROM river_job WHERE kind = 'process_sale'`).Scan(&jobs))
		require.Equal(t, []int{receipts, 2 * receipts, receipts, receipts}, []int{sales, lines, payments, jobs})
	})
}
