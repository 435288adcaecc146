package worker_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/pos"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/ent/schema/viewer"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// The crash test's sizes: sales registered, customers they are spread over,
// SIGKILLs of the worker process, and the window (after the process says it
// started) each kill is sampled from.
const (
	crashSales        = 300
	crashCustomers    = 12
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
	bin := crashBuild(t)
	for _, d := range storagetest.Dialects() {
		t.Run(d, func(t *testing.T) { crashRun(t, bin, d) })
	}
}

// crashBuild builds cmd/fideliza once into a temporary directory.
func crashBuild(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	require.NoError(t, err)
	root := wd
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(root)
		require.NotEqual(t, parent, root, "no go.mod above %s", wd)
		root = parent
	}
	bin := filepath.Join(t.TempDir(), "fideliza")
	started := time.Now()
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/fideliza")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	t.Logf("built %s in %v", bin, time.Since(started).Round(time.Millisecond))
	return bin
}

// crashSale is what the test registered and expects of one sale.
type crashSale struct {
	id       string
	customer string // customer id
	points   int64
	// What its return or cancellation, registered with it and so before it
	// is processed, takes back, and the sale's status in the end.
	returnID string
	reversed int64
	status   string
}

func crashRun(t *testing.T, bin, dialectName string) {
	began := time.Now()
	dbURL := storagetest.URL(t, dialectName, true)
	sales := crashSeed(t, dbURL)
	t.Logf("%s: seeded %d sales of %d customers in %v", dialectName, len(sales), crashCustomers, time.Since(began).Round(time.Millisecond))

	// The test process holds no connection while workers run: setup closed
	// its pools, and each poll opens and closes its own.
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, seed>>7))
	t.Logf("kill delays seeded with %d", seed)
	logDir := t.TempDir()
	for k := range crashKills {
		delay := crashKillShortest + time.Duration(rng.Int64N(int64(crashKillLongest-crashKillShortest)))
		w := crashStart(t, bin, dbURL, filepath.Join(logDir, fmt.Sprintf("worker-%d.log", k)))
		startup := w.waitStarted(t, 20*time.Second)
		time.Sleep(delay)
		w.kill(t)
		st := crashCounts(t, dbURL)
		t.Logf("kill %d: started in %v, SIGKILL %v later; %d/%d sales processed; %d jobs left running (%d of them with the sale not processed)",
			k+1, startup.Round(time.Millisecond), delay.Round(time.Millisecond), st.processed, len(sales), st.running, st.runningUnprocessed)
	}

	// The last worker runs undisturbed until every sale is processed and
	// every job is completed. It starts once the jobs the last kill left
	// running are older than --rescue-after, so that the first rescue pass
	// of its leader takes them all.
	time.Sleep(crashRescueAfter)
	restarted := time.Now()
	w := crashStart(t, bin, dbURL, filepath.Join(logDir, "worker-final.log"))
	w.waitStarted(t, 20*time.Second)
	deadline := time.Now().Add(crashDeadline)
	var st crashState
	for {
		st = crashCounts(t, dbURL)
		if st.failed > 0 {
			w.stop(t)
			t.Fatalf("%d sales FAILED; worker log:\n%s", st.failed, w.tail())
		}
		if st.processed == len(sales) && st.jobsLeft == 0 {
			break
		}
		if time.Now().After(deadline) {
			w.stop(t)
			t.Fatalf("after %v: %d/%d sales processed, %d jobs not completed (running %d); worker log:\n%s",
				crashDeadline, st.processed, len(sales), st.jobsLeft, st.running, w.tail())
		}
		time.Sleep(200 * time.Millisecond)
	}
	w.stop(t)
	t.Logf("%s: after the last restart every sale was processed and every job completed in %v; %d jobs ran more than once",
		dialectName, time.Since(restarted).Round(time.Millisecond), st.retried)
	paths, _ := filepath.Glob(filepath.Join(logDir, "worker-*.log"))
	for _, path := range paths {
		if errs := crashErrorLines(path, 3); len(errs) > 0 {
			t.Logf("%s: %s", filepath.Base(path), strings.Join(errs, "\n\t"))
		}
	}

	crashVerify(t, dbURL, sales)
	t.Logf("%s: crash test took %v", dialectName, time.Since(began).Round(time.Millisecond))
}

// crashSeed creates the tenant, its store and customers and registers the
// sales (and so their process_sale jobs) through the application.
func crashSeed(t *testing.T, dbURL string) []crashSale {
	t.Helper()
	ctx := context.Background()
	db, err := storage.Open(ctx, dbURL)
	require.NoError(t, err)
	defer db.Close()
	a := app.New(&app.Config{DB: db, Log: slog.New(slog.DiscardHandler)})
	tn := crashTenant(t, a)
	tctx := viewer.TenantContext(ctx, tn.id)

	soldAt := time.Now().Add(-time.Minute)
	sales := make([]crashSale, crashSales)
	for i := range crashSales {
		l := crashLine(i)
		in := pos.SaleInput{
			Protocol: "PARTNER_V1", Customer: &pos.POSCustomer{ID: tn.docs[l.customer], Type: "CPF"},
			SaleID: fmt.Sprint(100000 + i), StoreID: "LOJA-01", PosID: "PDV-1", Channel: "STORE",
			Date: &soldAt, Amount: &l.amount, AmountPayable: &l.amount,
			Items:    []pos.SaleItemInput{{ID: "1", GTIN: "7891000100103", Description: "Café 500 g", UnitPrice: &l.price, Quantity: &l.qty}},
			Payments: []pos.SalePaymentInput{{ID: "1", Amount: &l.amount, Method: "PIX"}},
		}
		s, err := a.POS.RegisterSale(tctx, in)
		require.NoError(t, err)
		sales[i] = crashSale{id: s.ID, customer: tn.ids[l.customer], points: l.points, status: "PROCESSED"}
		ret := pos.SaleReturnInput{Protocol: "PARTNER_V1", SaleRef: in.SaleID, ID: fmt.Sprint("R-", i), StoreID: "LOJA-01", Date: &soldAt}
		switch {
		case i%10 == 0:
			ret.Kind = "cancellation"
			sales[i].reversed, sales[i].status = l.points, "CANCELLED"
		case l.qty.IntPart() == 3: // one unit back: the points of the whole reais it took
			one := decimal.NewFromInt(1)
			ret.Kind, ret.Items = "return", []pos.ReturnItemInput{{ID: "1", Quantity: &one}}
			sales[i].reversed, sales[i].status = l.points-l.amount.Sub(l.price).Floor().IntPart(), "PARTIALLY_RETURNED"
		default:
			continue
		}
		r, err := a.POS.RegisterSaleReturn(tctx, ret)
		require.NoError(t, err)
		sales[i].returnID = r.ID
	}
	var jobs, returns int
	require.NoError(t, db.SQL.QueryRow(`SELECT count(*) FROM river_job WHERE kind = 'process_sale' AND state = 'available'`).Scan(&jobs))
	require.Equal(t, crashSales, jobs, "every registered sale has its job")
	require.NoError(t, db.SQL.QueryRow(`SELECT count(*) FROM river_job WHERE kind = 'process_sale_return'`).Scan(&returns))
	require.Positive(t, returns)
	return sales
}

// crashTenantOf is the tenant the crash tests sell to: its id and its
// customers' documents and ids.
type crashTenantOf struct {
	id        string
	docs, ids []string
}

// crashTenant creates the tenant, its store LOJA-01 and crashCustomers
// customers.
func crashTenant(t *testing.T, a *app.App) crashTenantOf {
	t.Helper()
	sys := viewer.SystemContext(context.Background())
	tn, err := a.Backoffice.CreateTenant(sys, "Mercado Crash", nil)
	require.NoError(t, err)
	_, err = a.Backoffice.CreateStore(sys, tn.ID, "LOJA-01", "Loja Centro")
	require.NoError(t, err)
	out := crashTenantOf{id: tn.ID, docs: make([]string, crashCustomers), ids: make([]string, crashCustomers)}
	for i := range crashCustomers {
		out.docs[i] = crashCPF(i)
		c, err := a.Customers.CreateCustomer(viewer.TenantContext(context.Background(), tn.ID), customers.CustomerInput{
			Name: opt.Of(fmt.Sprintf("Cliente %d", i)), Email: opt.Of(fmt.Sprintf("cliente%d@example.com", i)),
			CPF: opt.Of(out.docs[i]),
		})
		require.NoError(t, err)
		out.ids[i] = c.ID
	}
	return out
}

// crashLineOf is the one line of the i-th sale and what it earns.
type crashLineOf struct {
	customer           int // index into the tenant's customers
	price, qty, amount decimal.Decimal
	points             int64
}

func crashLine(i int) crashLineOf {
	price := decimal.New(int64(1050+i*37%9000), -2) // R$ 10.50 … R$ 100.49
	qty := decimal.NewFromInt(int64(1 + i%3))
	amount := price.Mul(qty)
	// 1 point per whole real paid: the tenant's default rate.
	return crashLineOf{customer: i % crashCustomers, price: price, qty: qty, amount: amount, points: amount.Floor().IntPart()}
}

// crashCPF is the i-th valid CPF: 9 digits from i and its check digits.
func crashCPF(i int) string {
	base := fmt.Sprintf("%09d", 239000000+i*7919)
	digit := func(s string) byte {
		sum := 0
		for j := range len(s) {
			sum += int(s[j]-'0') * (len(s) + 1 - j)
		}
		r := sum * 10 % 11
		if r == 10 {
			r = 0
		}
		return byte('0' + r)
	}
	d1 := digit(base)
	return base + string(d1) + string(digit(base+string(d1)))
}
