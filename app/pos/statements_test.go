package pos_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/apptest"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/pos"
	"github.com/fideliza/fideliza/domain/document"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// TestProcessingStatementsPerSale: a run processing the sales of distinct
// customers (each earning points, no campaign) runs a fixed number of
// statements a sale plus a few for the run: the customer and the sale
// locked (on PostgreSQL), the ledger's entry, lot, balance and level, and
// the customer's purchases recounted. The earlier sales of its customers,
// its events and its PROCESSED marks are read and written once for the run.
func TestProcessingStatementsPerSale(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		env := apptest.New(t, db, apptest.WithTenant("Mercado Contado"), apptest.WithStore("LOJA-01", "Loja Centro"))
		a, ctx := env.App, env.Ctx
		const sales = 30
		perSale := map[string]int{dialect.SQLite: 6, dialect.Postgres: 7}[db.Dialect]
		const perRun = 15
		soldAt := time.Now().Add(-time.Minute)
		one := decimal.NewFromInt(1)
		var ids []string
		for i := range sales {
			cpf := document.CPFOf(720_000_000 + i)
			_, err := a.Customers.CreateCustomer(ctx, customers.CustomerInput{Name: opt.Of(fmt.Sprint("Cliente ", i)), Email: opt.Of(fmt.Sprintf("c%d@contado.example", i)), CPF: opt.Of(cpf)})
			require.NoError(t, err)
			price := decimal.NewFromInt(int64(20 + i))
			s, err := a.POS.RegisterSale(ctx, pos.SaleInput{
				Protocol: "PARTNER_V1", Customer: &pos.POSCustomer{ID: cpf, Type: "CPF"}, SaleID: fmt.Sprint(i),
				StoreID: "LOJA-01", PosID: "PDV-1", Channel: "STORE", Date: &soldAt, Amount: &price, AmountPayable: &price,
				Items:    []pos.SaleItemInput{{ID: "1", GTIN: "7891000100103", Description: "Café", UnitPrice: &price, Quantity: &one}},
				Payments: []pos.SalePaymentInput{{ID: "1", Amount: &price, Method: "PIX"}},
			})
			require.NoError(t, err)
			ids = append(ids, s.ID)
		}
		var statements atomic.Int32
		stop := db.Trace(func(string) { statements.Add(1) })
		require.NoError(t, a.POS.ProcessSales(ctx, ids...))
		stop()
		n := int(statements.Load())
		t.Logf("%s: %d statements for %d sales", db.Dialect, n, sales)
		require.LessOrEqual(t, n, perSale*sales+perRun, "statements processing %d sales", sales)
	})
}
