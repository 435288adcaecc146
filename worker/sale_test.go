package worker_test

import (
	"context"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/apptest"
	"github.com/fideliza/fideliza/app/pos"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/worker"
)

// TestProcessSaleLastAttemptTimeout: when the last attempt of a sale's job
// fails because its time ran out (River cancels the job's context after
// JobTimeout, two thirds of --rescue-after), the sale is still marked FAILED with
// the reason instead of staying RECEIVED forever.
func TestProcessSaleLastAttemptTimeout(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		env := apptest.New(t, db, apptest.WithTenant("Mercado Timeout"), apptest.WithStore("LOJA-01", "Loja Centro"))
		a := env.App
		soldAt := time.Now().Add(-time.Minute)
		amount, one := decimal.RequireFromString("12.50"), decimal.NewFromInt(1)
		s, err := a.POS.RegisterSale(env.Ctx, pos.SaleInput{
			Protocol: "PARTNER_V1", SaleID: "777", StoreID: "LOJA-01", PosID: "PDV-1", Channel: "STORE",
			Date: &soldAt, Amount: &amount, AmountPayable: &amount,
			Items:    []pos.SaleItemInput{{ID: "1", GTIN: "7891000100103", Description: "Café", UnitPrice: &amount, Quantity: &one}},
			Payments: []pos.SalePaymentInput{{ID: "1", Amount: &amount, Method: "PIX"}},
		})
		require.NoError(t, err)

		ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
		defer cancel()
		<-ctx.Done() // the job's time is up
		w := worker.For[jobs.ProcessSale](apptest.Process(a))
		job := &river.Job[jobs.ProcessSale]{
			JobRow: &rivertype.JobRow{Attempt: 25, MaxAttempts: 25},
			Args:   jobs.ProcessSale{TenantID: env.TenantID, SaleID: s.ID},
		}
		require.ErrorIs(t, w.Work(ctx, job), context.DeadlineExceeded)

		got, err := db.Ent.Sale.Get(env.Ctx, s.ID)
		require.NoError(t, err)
		require.Equal(t, "FAILED", string(got.Status))
		require.NotNil(t, got.FailureReason)
		require.Contains(t, *got.FailureReason, "deadline exceeded")
	})
}
