package audiences_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/apptest"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// BenchmarkPreviewAudience previews audiences over a tenant of
// FIDELIZA_BENCH_CUSTOMERS customers (apptest.BenchTenant: one to six sales each),
// on each database the tests run on: a rule over the profile alone
// (s/profile) and one over purchases per store group too (s/purchases,
// read from the purchases the database keeps by customer and store). Both
// rules translate into SQL: the database counts. cpu-s/… is the CPU the
// test process spent (all of SQLite's work; on PostgreSQL the client's
// alone), which a loaded machine's wall clock overstates less.
//
//	FIDELIZA_BENCH_CUSTOMERS=1000000 go test ./app/audiences -run '^$' -bench PreviewAudience -benchtime 1x -timeout 60m
//
// FIDELIZA_BENCH_KEEP keeps the tenant across runs (see apptest.BenchTenant).
func BenchmarkPreviewAudience(b *testing.B) {
	for _, d := range storagetest.Dialects() {
		b.Run(d, func(b *testing.B) {
			n := apptest.BenchCustomers(b)
			a, ctx, asOf := apptest.BenchTenant(b, d, n)
			a.Clock = func() time.Time { return asOf }
			b.ResetTimer()
			for range b.N {
				for _, r := range []struct{ metric, rule string }{
					{"s/profile", `lifetime_value >= 1000 && level == "bronze"`},
					{"s/purchases", `group_purchases["norte"] >= 3 && days_since_last_purchase <= 180`},
				} {
					begun, cpu := time.Now(), processCPU()
					p, err := a.Audiences.PreviewAudience(ctx, r.rule)
					require.NoError(b, err)
					require.Positive(b, p.Count)
					require.Less(b, p.Count, n)
					b.ReportMetric(time.Since(begun).Seconds(), r.metric)
					b.ReportMetric((processCPU() - cpu).Seconds(), "cpu-"+r.metric)
				}
			}
		})
	}
}

// processCPU is the CPU time the process has spent, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
