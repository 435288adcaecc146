package app_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/sale"
	"github.com/fideliza/fideliza/ent/schema/viewer"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// envBenchCustomers sizes the benchmarks of many customers.
const envBenchCustomers = "FIDELIZA_BENCH_CUSTOMERS"

// benchCustomers is how many customers a benchmark makes: 20,000 unless
// FIDELIZA_BENCH_CUSTOMERS says.
func benchCustomers(b *testing.B) int {
	v := os.Getenv(envBenchCustomers)
	if v == "" {
		return 20000
	}
	n, err := strconv.Atoi(v)
	require.NoError(b, err)
	return n
}

// benchTenant writes, on a database of dialectName, a tenant of n
// customers with one to six processed sales each over the two years before
// the instant it answers (asOf), in bulk; it answers the application and
// the tenant's context.
func benchTenant(b *testing.B, dialectName string, n int) (*app.App, context.Context, time.Time) {
	db := storagetest.Open(b, dialectName)
	a := app.New(&app.Config{DB: db})
	sys := viewer.SystemContext(context.Background())
	tn, err := a.Backoffice.CreateTenant(sys, "Benchmark", nil)
	require.NoError(b, err)
	st, err := a.Backoffice.CreateStore(sys, tn.ID, "LOJA-01", "Loja", "norte")
	require.NoError(b, err)
	ctx := viewer.TenantContext(context.Background(), tn.ID)
	asOf := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	started := time.Now()
	const batch = 1000
	receipt := 0
	for done := 0; done < n; done += batch {
		size := min(batch, n-done)
		custs := make([]*ent.CustomerCreate, size)
		for i := range custs {
			custs[i] = db.Ent.Customer.Create().SetTenantID(tn.ID).SetDocument(fmt.Sprintf("%011d", done+i)).
				SetName(fmt.Sprint("Cliente ", done+i)).SetLifetimeValue(decimal.NewFromInt(int64((done + i) % 2000)))
		}
		created, err := db.Ent.Customer.CreateBulk(custs...).Save(sys)
		require.NoError(b, err)
		var sales []*ent.SaleCreate
		for i, c := range created {
			k := done + i
			for j := range 1 + k%6 {
				receipt++
				amount := decimal.NewFromInt(int64(20 + (k*7+j*13)%180))
				at := asOf.AddDate(0, 0, -((k*31 + j*97) % 730))
				sales = append(sales, db.Ent.Sale.Create().SetTenantID(tn.ID).SetStoreID(st.ID).SetExternalID(strconv.Itoa(receipt)).
					SetCustomerID(c.ID).SetCustomerDocument(c.Document).SetSoldAt(at).SetAmount(amount).SetAmountPayable(amount).
					SetDiscountAmount(decimal.Zero).SetStatus(sale.StatusPROCESSED))
			}
		}
		for len(sales) > 0 {
			k := min(len(sales), 1000)
			require.NoError(b, db.Ent.Sale.CreateBulk(sales[:k]...).Exec(sys))
			sales = sales[k:]
		}
	}
	b.Logf("%d customers and %d sales written in %v", n, receipt, time.Since(started).Round(time.Millisecond))
	return a, ctx, asOf
}

// BenchmarkScoreCustomers fits a tenant's churn model and scores every
// customer, on a tenant of FIDELIZA_BENCH_CUSTOMERS customers with one to
// six processed sales each over two years, written in bulk (the setup is
// not measured). It reports a fit alone, the daily scoring (the model is
// fresh), the weekly one (the model is refitted first), and the peak heap.
//
//	FIDELIZA_BENCH_CUSTOMERS=1000000 go test ./app -run '^$' -bench ScoreCustomers -benchtime 1x -timeout 60m
func BenchmarkScoreCustomers(b *testing.B) {
	a, ctx, asOf := benchTenant(b, "sqlite3", benchCustomers(b))
	n := benchCustomers(b)
	b.ResetTimer()
	for range b.N {
		var peak atomic.Uint64
		stop := make(chan struct{})
		go func() {
			var ms runtime.MemStats
			for {
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > peak.Load() {
					peak.Store(ms.HeapInuse)
				}
				select {
				case <-stop:
					return
				case <-time.After(50 * time.Millisecond):
				}
			}
		}()
		begun := time.Now()
		_, err := a.Insights.FitChurnModel(ctx, asOf)
		require.NoError(b, err)
		b.ReportMetric(time.Since(begun).Seconds(), "s/fit")
		begun = time.Now()
		scored, err := a.Insights.ScoreCustomers(ctx, asOf) // the model is fresh: the daily run
		require.NoError(b, err)
		require.Equal(b, n, scored)
		b.ReportMetric(time.Since(begun).Seconds(), "s/scoring")
		begun = time.Now()
		scored, err = a.Insights.ScoreCustomers(ctx, asOf.AddDate(0, 0, 7)) // the weekly run: refit, then score
		close(stop)
		require.NoError(b, err)
		require.Equal(b, n, scored)
		b.ReportMetric(time.Since(begun).Seconds(), "s/refit+scoring")
		b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MB")
	}
}
