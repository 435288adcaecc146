package worker_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/pos"
	"github.com/fideliza/fideliza/internal/crashtest"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// The crash test's sizes: sales registered, customers they are spread over,
// SIGKILLs of the worker process, and the window (after the process says it
// started) each kill is sampled from.
const (
	crashSales        = 300
	crashKills        = 6
	crashKillShortest = 20 * time.Millisecond
	crashKillLongest  = 400 * time.Millisecond
	// crashRescueAfter is the worker's --rescue-after: the jobs a killed
	// process left running are retried by a live one after it.
	crashRescueAfter = 3 * time.Second
	// crashDeadline bounds the last, uninterrupted worker. River rescues
	// stuck jobs from its leader only, every 30 s (its first pass right
	// after it is elected), and a killed leader keeps its leadership for
	// its TTL (15 s): the deadline covers the worst of both, with room for a
	// loaded CI machine running other packages beside it.
	crashDeadline = 150 * time.Second
)

// TestWorkerCrash kills the real worker process (fideliza worker) with
// SIGKILL at sampled moments while it processes sales and their returns and
// cancellations (registered before the sales are processed, so they wait
// for them), restarts it, and checks that in the end every sale was
// processed exactly once and every return applied exactly once: one credit
// ledger entry per sale, one reversal per return, balances equal to the
// ledger, no sale FAILED.
func TestWorkerCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills worker processes; skipped with -short")
	}
	t.Parallel()
	bin := crashtest.Build(t)
	for _, d := range storagetest.Dialects() {
		t.Run(d, func(t *testing.T) { crashRun(t, bin, d) })
	}
}

func crashRun(t *testing.T, bin, dialectName string) {
	began := time.Now()
	dbURL := storagetest.URL(t, dialectName, true)
	sales := crashSeed(t, dbURL)
	t.Logf("%s: seeded %d sales of %d customers in %v", dialectName, len(sales), crashtest.Customers, time.Since(began).Round(time.Millisecond))

	// The test process holds no connection while workers run: setup closed
	// its pools, and each poll opens and closes its own.
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, seed>>7))
	t.Logf("kill delays seeded with %d", seed)
	logDir := t.TempDir()
	for k := range crashKills {
		delay := crashKillShortest + time.Duration(rng.Int64N(int64(crashKillLongest-crashKillShortest)))
		w := crashStart(t, bin, dbURL, filepath.Join(logDir, fmt.Sprintf("worker-%d.log", k)))
		startup := w.WaitStarted(t, 20*time.Second)
		time.Sleep(delay) // crash timing: the kill lands at a random point of the work
		w.Kill(t)
		st := crashtest.Counts(t, dbURL)
		t.Logf("kill %d: started in %v, SIGKILL %v later; %d/%d sales processed; %d jobs left running (%d of them with the sale not processed)",
			k+1, startup.Round(time.Millisecond), delay.Round(time.Millisecond), st.Processed, len(sales), st.Running, st.RunningUnprocessed)
	}

	// The last worker runs undisturbed until every sale is processed and
	// every job is completed. It starts once the jobs the last kill left
	// running are older than --rescue-after, so that the first rescue pass
	// of its leader takes them all.
	time.Sleep(crashRescueAfter) // crash timing: the killed jobs grow older than --rescue-after
	restarted := time.Now()
	w := crashStart(t, bin, dbURL, filepath.Join(logDir, "worker-final.log"))
	w.WaitStarted(t, 20*time.Second)
	deadline := time.Now().Add(crashDeadline)
	var st crashtest.State
	for {
		st = crashtest.Counts(t, dbURL)
		if st.Failed > 0 {
			w.Stop(t)
			t.Fatalf("%d sales FAILED; worker log:\n%s", st.Failed, w.Tail())
		}
		if st.Processed == len(sales) && st.JobsLeft == 0 {
			break
		}
		if time.Now().After(deadline) {
			w.Stop(t)
			t.Fatalf("after %v: %d/%d sales processed, %d jobs not completed (running %d); worker log:\n%s",
				crashDeadline, st.Processed, len(sales), st.JobsLeft, st.Running, w.Tail())
		}
		time.Sleep(200 * time.Millisecond) // polls the counts until the deadline above
	}
	w.Stop(t)
	t.Logf("%s: after the last restart every sale was processed and every job completed in %v; %d jobs ran more than once",
		dialectName, time.Since(restarted).Round(time.Millisecond), st.Retried)
	paths, _ := filepath.Glob(filepath.Join(logDir, "worker-*.log"))
	for _, path := range paths {
		if errs := crashtest.ErrorLines(path, 3); len(errs) > 0 {
			t.Logf("%s: %s", filepath.Base(path), strings.Join(errs, "\n\t"))
		}
	}

	crashtest.Verify(t, dbURL, sales)
	t.Logf("%s: crash test took %v", dialectName, time.Since(began).Round(time.Millisecond))
}

// crashStart starts fideliza worker on dbURL, rescuing after crashRescueAfter.
func crashStart(t *testing.T, bin, dbURL, logPath string) *crashtest.Process {
	t.Helper()
	return crashtest.Start(t, bin, logPath, `"msg":"worker started"`, "worker", "--database-url", dbURL,
		"--rescue-after", crashRescueAfter.String(), "--workers", "8", "--log-level", "info")
}

// crashSeed creates the tenant, its store and customers and registers the
// sales (and so their process_sale jobs) through the application.
func crashSeed(t *testing.T, dbURL string) []crashtest.Sale {
	t.Helper()
	ctx := context.Background()
	db, err := storage.Open(ctx, dbURL)
	require.NoError(t, err)
	defer db.Close()
	a := app.New(&app.Config{DB: db, Log: slog.New(slog.DiscardHandler)})
	tn := crashtest.NewTenant(t, a)
	tctx := viewer.TenantContext(ctx, tn.ID)

	soldAt := time.Now().Add(-time.Minute)
	sales := make([]crashtest.Sale, crashSales)
	for i := range crashSales {
		l := crashtest.Line(i)
		in := pos.SaleInput{
			Protocol: "PARTNER_V1", Customer: &pos.POSCustomer{ID: tn.Docs[l.Customer], Type: "CPF"},
			SaleID: fmt.Sprint(100000 + i), StoreID: "LOJA-01", PosID: "PDV-1", Channel: "STORE",
			Date: &soldAt, Amount: &l.Amount, AmountPayable: &l.Amount,
			Items:    []pos.SaleItemInput{{ID: "1", GTIN: "7891000100103", Description: "Café 500 g", UnitPrice: &l.Price, Quantity: &l.Qty}},
			Payments: []pos.SalePaymentInput{{ID: "1", Amount: &l.Amount, Method: "PIX"}},
		}
		s, err := a.POS.RegisterSale(tctx, in)
		require.NoError(t, err)
		sales[i] = crashtest.Sale{ID: s.ID, Customer: tn.IDs[l.Customer], Points: l.Points, Status: "PROCESSED"}
		ret := pos.SaleReturnInput{Protocol: "PARTNER_V1", SaleRef: in.SaleID, ID: fmt.Sprint("R-", i), StoreID: "LOJA-01", Date: &soldAt}
		switch {
		case i%10 == 0:
			ret.Kind = "cancellation"
			sales[i].Reversed, sales[i].Status = l.Points, "CANCELLED"
		case l.Qty.IntPart() == 3: // one unit back: the points of the whole reais it took
			one := decimal.NewFromInt(1)
			ret.Kind, ret.Items = "return", []pos.ReturnItemInput{{ID: "1", Quantity: &one}}
			sales[i].Reversed, sales[i].Status = l.Points-l.Amount.Sub(l.Price).Floor().IntPart(), "PARTIALLY_RETURNED"
		default:
			continue
		}
		r, err := a.POS.RegisterSaleReturn(tctx, ret)
		require.NoError(t, err)
		sales[i].ReturnID = r.ID
	}
	var jobs, returns int
	require.NoError(t, db.SQL.QueryRow(`SELECT count(*) FROM river_job WHERE kind = 'process_sale' AND state = 'available'`).Scan(&jobs))
	require.Equal(t, crashSales, jobs, "every registered sale has its job")
	require.NoError(t, db.SQL.QueryRow(`SELECT count(*) FROM river_job WHERE kind = 'process_sale_return'`).Scan(&returns))
	require.Positive(t, returns)
	return sales
}
