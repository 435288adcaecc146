package worker_test

import (
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/internal/crashtest"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// The points crash test's sizes: the sales, each paying R$ 1.00 (100
// points) with a hold, and the points each customer starts with.
const (
	pointsCrashSales = 240
	pointsCrashSeed  = 5000
)

// TestServeCrashPointsPayment: sales paying part with points, each with its
// hold, are registered twice while serve processes them, and serve is
// killed with SIGKILL in the midst of processing; a new serve gets every
// sale once more (the till never heard back). In the end each sale is
// processed once and its hold debited exactly once (one debit entry, one
// points.spent event, the hold spent), and every customer's balance is its
// ledger and its lots.
func TestServeCrashPointsPayment(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills serve processes; skipped with -short")
	}
	t.Parallel()
	bin := crashtest.Build(t)
	for _, d := range storagetest.Dialects() {
		t.Run(d, func(t *testing.T) { pointsCrashRun(t, bin, d) })
	}
}

func pointsCrashRun(t *testing.T, bin, dialectName string) {
	dbURL := storagetest.URL(t, dialectName, true)
	till := crashtest.NewTill(t, dbURL)
	crashtest.TakePoints(t, dbURL, till.Tenant, pointsCrashSeed)
	logDir := t.TempDir()
	serve := func(name string) (*crashtest.Process, string) {
		t.Helper()
		addr := crashtest.FreeAddr(t)
		p := crashtest.Start(t, bin, filepath.Join(logDir, name+".log"), `"msg":"listening"`,
			"serve", "--database-url", dbURL, "--addr", addr, "--rate-limit", "off", "--log-level", "info")
		p.WaitStarted(t, 30*time.Second)
		return p, "http://" + addr
	}

	p, url := serve("serve-1")
	holds := make([]crashtest.PointsPayment, pointsCrashSales+1)
	for n := 1; n <= pointsCrashSales; n++ {
		holds[n] = till.Hold(t, url, n, decimal.NewFromInt(1))
	}
	// Every sale sent twice by 8 tills; serve killed once a quarter of the
	// sales are processed: the sales it had not answered are sent again.
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for n := int(next.Add(1)); n <= pointsCrashSales; n = int(next.Add(1)) {
				for range 2 {
					if status := till.Register(t, url, n, holds[n]); status != 202 && status != 0 {
						t.Errorf("sale %d: status %d", n, status)
					}
				}
			}
		})
	}
	deadline := time.Now().Add(time.Minute)
	for crashtest.Counts(t, dbURL).Processed < pointsCrashSales/4 {
		if time.Now().After(deadline) {
			t.Fatalf("no quarter of the sales processed after a minute; log:\n%s", p.Tail())
		}
		time.Sleep(2 * time.Millisecond) // crash timing: polls so the kill lands just past a quarter
	}
	p.Kill(t)
	killed := time.Now()
	wg.Wait()
	st := crashtest.Counts(t, dbURL)
	t.Logf("%s: killed with %d of %d sales processed, %d jobs not completed (%d left running)",
		dialectName, st.Processed, pointsCrashSales, st.JobsLeft, st.Running)
	require.Less(t, st.Processed, pointsCrashSales, "serve was killed before it processed every sale")

	p, url = serve("serve-2")
	for n := 1; n <= pointsCrashSales; n++ {
		require.Equal(t, 202, till.Register(t, url, n, holds[n]), "sale %d sent again", n)
	}
	crashtest.WaitProcessed(t, dbURL, killed.Add(serveRecovery), p.Tail)
	p.Stop(t)
	verifyPointsPaid(t, dbURL, till)
}

// verifyPointsPaid checks every sale of the till processed once, paid 100
// points by its hold debited once, and each customer's balance.
func verifyPointsPaid(t *testing.T, dbURL string, till *crashtest.Till) {
	t.Helper()
	db := crashtest.Open(t, dbURL)
	defer db.Close()
	count := func(query string, args ...any) int {
		var n int
		require.NoError(t, db.Reads.QueryRow(query, args...).Scan(&n))
		return n
	}
	want := map[string]int64{} // customer → balance
	for _, id := range till.Tenant.IDs {
		want[id] = pointsCrashSeed
	}
	rows, err := db.Reads.Query(`SELECT external_id, id, status, points_credited FROM sales`)
	require.NoError(t, err)
	sales := map[string]string{}
	for rows.Next() {
		var ext, id, status string
		var credited int64
		require.NoError(t, rows.Scan(&ext, &id, &status, &credited))
		n, err := strconv.Atoi(ext)
		require.NoError(t, err)
		l := crashtest.Line(n)
		require.Equal(t, "PROCESSED", status, "sale %d", n)
		require.Equal(t, l.Amount.Sub(decimal.NewFromInt(1)).Floor().IntPart(), credited, "sale %d earns on what points did not pay", n)
		want[till.Tenant.IDs[l.Customer]] += credited - 100
		sales[id] = ext
	}
	require.NoError(t, rows.Err())
	require.Len(t, sales, pointsCrashSales, "every sale stored once")

	rows, err = db.Reads.Query(`SELECT source_id, count(*), sum(points) FROM points_entries WHERE kind = 'debit' GROUP BY source_id`)
	require.NoError(t, err)
	debited := 0
	for rows.Next() {
		var id string
		var n, points int64
		require.NoError(t, rows.Scan(&id, &n, &points))
		require.Contains(t, sales, id, "a debit of a sale")
		require.Equal(t, []int64{1, -100}, []int64{n, points}, "sale %s: one debit of its hold's points", sales[id])
		debited++
	}
	require.NoError(t, rows.Err())
	require.Equal(t, pointsCrashSales, debited, "every sale's hold debited")
	require.Equal(t, pointsCrashSales, count(`SELECT count(*) FROM events WHERE type = 'points.spent'`), "one points.spent per sale")
	require.Equal(t, pointsCrashSales, count(`SELECT count(*) FROM points_holds WHERE status = 'spent' AND sale_id IS NOT NULL`),
		"every hold spent by its sale")

	rows, err = db.Reads.Query(`SELECT c.id, c.points_balance,
		COALESCE((SELECT sum(e.points) FROM points_entries e WHERE e.customer_id = c.id), 0),
		COALESCE((SELECT sum(l.remaining) FROM points_lots l WHERE l.customer_id = c.id), 0) FROM customers c`)
	require.NoError(t, err)
	for rows.Next() {
		var id string
		var balance, ledger, lots int64
		require.NoError(t, rows.Scan(&id, &balance, &ledger, &lots))
		require.Equal(t, []int64{want[id], want[id], want[id]}, []int64{balance, ledger, lots},
			"customer %s: balance, ledger and lots", id)
	}
	require.NoError(t, rows.Err())
}
