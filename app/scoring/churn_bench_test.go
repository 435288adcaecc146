package scoring_test

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/apptest"
)

// BenchmarkScoreCustomers fits a tenant's churn model and scores every
// customer, on a tenant of FIDELIZA_BENCH_CUSTOMERS customers with one to
// six processed sales each over two years, written in bulk (the setup is
// not measured). It reports a fit alone, the daily scoring (the model is
// fresh), the weekly one (the model is refitted first), and the peak heap.
//
//	FIDELIZA_BENCH_CUSTOMERS=1000000 go test ./app/scoring -run '^$' -bench ScoreCustomers -benchtime 1x -timeout 60m
func BenchmarkScoreCustomers(b *testing.B) {
	a, ctx, asOf := apptest.BenchTenant(b, "sqlite3", apptest.BenchCustomers(b))
	n := apptest.BenchCustomers(b)
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
		_, err := a.Scoring.FitChurnModel(ctx, asOf)
		require.NoError(b, err)
		b.ReportMetric(time.Since(begun).Seconds(), "s/fit")
		begun = time.Now()
		scored, err := a.Scoring.ScoreCustomers(ctx, asOf) // the model is fresh: the daily run
		require.NoError(b, err)
		require.Equal(b, n, scored)
		b.ReportMetric(time.Since(begun).Seconds(), "s/scoring")
		begun = time.Now()
		scored, err = a.Scoring.ScoreCustomers(ctx, asOf.AddDate(0, 0, 7)) // the weekly run: refit, then score
		close(stop)
		require.NoError(b, err)
		require.Equal(b, n, scored)
		b.ReportMetric(time.Since(begun).Seconds(), "s/refit+scoring")
		b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MB")
	}
}
