package worker_test

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/ent/schema/viewer"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/worker"
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
		in := app.SaleInput{
			Protocol: "PARTNER_V1", Customer: &app.POSCustomer{ID: tn.docs[l.customer], Type: "CPF"},
			SaleID: fmt.Sprint(100000 + i), StoreID: "LOJA-01", PosID: "PDV-1", Channel: "STORE",
			Date: &soldAt, Amount: &l.amount, AmountPayable: &l.amount,
			Items:    []app.SaleItemInput{{ID: "1", GTIN: "7891000100103", Description: "Café 500 g", UnitPrice: &l.price, Quantity: &l.qty}},
			Payments: []app.SalePaymentInput{{ID: "1", Amount: &l.amount, Method: "PIX"}},
		}
		s, err := a.RegisterSale(tctx, in)
		require.NoError(t, err)
		sales[i] = crashSale{id: s.ID, customer: tn.ids[l.customer], points: l.points, status: "PROCESSED"}
		ret := app.SaleReturnInput{Protocol: "PARTNER_V1", SaleRef: in.SaleID, ID: fmt.Sprint("R-", i), StoreID: "LOJA-01", Date: &soldAt}
		switch {
		case i%10 == 0:
			ret.Kind = "cancellation"
			sales[i].reversed, sales[i].status = l.points, "CANCELLED"
		case l.qty.IntPart() == 3: // one unit back: the points of the whole reais it took
			one := decimal.NewFromInt(1)
			ret.Kind, ret.Items = "return", []app.ReturnItemInput{{ID: "1", Quantity: &one}}
			sales[i].reversed, sales[i].status = l.points-l.amount.Sub(l.price).Floor().IntPart(), "PARTIALLY_RETURNED"
		default:
			continue
		}
		r, err := a.RegisterSaleReturn(tctx, ret)
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

// crashWorker is a running fideliza worker process.
type crashWorker struct {
	cmd     *exec.Cmd
	logPath string
	started chan struct{} // closed when it logs "worker started"
	exited  chan struct{} // closed when it has exited
	waitErr error
}

// crashStart starts fideliza worker on dbURL, rescuing after crashRescueAfter.
func crashStart(t *testing.T, bin, dbURL, logPath string) *crashWorker {
	t.Helper()
	return crashStartProcess(t, bin, logPath, `"msg":"worker started"`, "worker", "--database-url", dbURL,
		"--rescue-after", crashRescueAfter.String(), "--workers", "8", "--log-level", "info")
}

// crashStartProcess starts bin with args; the process has started when it
// logs a line holding ready.
func crashStartProcess(t *testing.T, bin, logPath, ready string, args ...string) *crashWorker {
	t.Helper()
	logFile, err := os.Create(logPath)
	require.NoError(t, err)
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	cmd.Stdout = logFile
	require.NoError(t, cmd.Start())
	w := &crashWorker{cmd: cmd, logPath: logPath, started: make(chan struct{}), exited: make(chan struct{})}
	var once sync.Once
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logFile, line)
			if strings.Contains(line, ready) {
				once.Do(func() { close(w.started) })
			}
		}
	}()
	go func() {
		<-scanned // Wait closes the pipe: read it to the end first
		w.waitErr = cmd.Wait()
		logFile.Close()
		close(w.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-w.exited:
		default:
			_ = cmd.Process.Kill()
			<-w.exited
		}
	})
	return w
}

// waitStarted waits for the process to start working and returns how long
// that took.
func (w *crashWorker) waitStarted(t *testing.T, timeout time.Duration) time.Duration {
	t.Helper()
	began := time.Now()
	select {
	case <-w.started:
		return time.Since(began)
	case <-w.exited:
		t.Fatalf("worker exited before starting (%v); log:\n%s", w.waitErr, w.tail())
	case <-time.After(timeout):
		t.Fatalf("worker did not start within %v; log:\n%s", timeout, w.tail())
	}
	return 0
}

// kill ends the process with SIGKILL: no deferred function, no River
// shutdown, transactions cut off mid-way.
func (w *crashWorker) kill(t *testing.T) {
	t.Helper()
	select {
	case <-w.exited:
		t.Fatalf("worker exited by itself (%v); log:\n%s", w.waitErr, w.tail())
	default:
	}
	require.NoError(t, w.cmd.Process.Signal(syscall.SIGKILL))
	<-w.exited
}

// stop ends the process gracefully (SIGTERM), or with SIGKILL when it does
// not stop in time.
func (w *crashWorker) stop(t *testing.T) {
	t.Helper()
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.exited:
	case <-time.After(20 * time.Second):
		_ = w.cmd.Process.Kill()
		<-w.exited
		t.Errorf("worker did not stop within 20 s of SIGTERM; log:\n%s", w.tail())
	}
}

// tail is the end of the process's log, for failure messages: the log
// file goes with the test's temporary directory.
func (w *crashWorker) tail() string {
	data, _ := os.ReadFile(w.logPath)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	return strings.Join(lines[max(0, len(lines)-20):], "\n")
}

// crashErrorLines returns up to n log lines at level ERROR.
func crashErrorLines(path string, n int) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []string
	total := 0
	for _, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, `"level":"ERROR"`) {
			total++
			if len(out) < n {
				out = append(out, line)
			}
		}
	}
	if total > len(out) {
		out = append(out, fmt.Sprintf("… %d ERROR lines in all", total))
	}
	return out
}

// crashState is the progress the database shows.
type crashState struct {
	processed, failed int
	jobsLeft          int // process_sale and process_sale_return jobs not completed
	running           int // those running (or left running by a killed process)
	// runningUnprocessed are running jobs whose sale is not processed: a
	// killed process was inside (or before) their transaction.
	runningUnprocessed int
	retried            int // process_sale jobs on their second attempt or later
}

// crashOpen opens the database for one look; the caller closes it.
func crashOpen(t *testing.T, dbURL string) *storage.DB {
	t.Helper()
	db, err := storage.Open(context.Background(), dbURL)
	require.NoError(t, err)
	return db
}

func crashCounts(t *testing.T, dbURL string) crashState {
	t.Helper()
	db := crashOpen(t, dbURL)
	defer db.Close()
	var st crashState
	require.NoError(t, db.Reads.QueryRow(`SELECT
		(SELECT count(*) FROM sales WHERE status NOT IN ('RECEIVED', 'FAILED')),
		(SELECT count(*) FROM sales WHERE status = 'FAILED'),
		(SELECT count(*) FROM river_job WHERE kind IN ('process_sale', 'process_sale_return') AND state <> 'completed'),
		(SELECT count(*) FROM river_job WHERE kind IN ('process_sale', 'process_sale_return') AND state = 'running'),
		(SELECT count(*) FROM river_job WHERE kind = 'process_sale' AND attempt > 1)`).
		Scan(&st.processed, &st.failed, &st.jobsLeft, &st.running, &st.retried))

	// Which of the running jobs were cut off before their transaction
	// committed: their sale is still RECEIVED.
	received := map[string]bool{}
	rows, err := db.Reads.Query(`SELECT id FROM sales WHERE status = 'RECEIVED'`)
	require.NoError(t, err)
	for rows.Next() {
		var id string
		require.NoError(t, rows.Scan(&id))
		received[id] = true
	}
	require.NoError(t, rows.Err())
	rows, err = db.Reads.Query(`SELECT CAST(args AS TEXT) FROM river_job WHERE kind = 'process_sale' AND state = 'running'`)
	require.NoError(t, err)
	for rows.Next() {
		var raw string
		require.NoError(t, rows.Scan(&raw))
		var args jobs.ProcessSale
		require.NoError(t, json.Unmarshal([]byte(raw), &args))
		if received[args.SaleID] {
			st.runningUnprocessed++
		}
	}
	require.NoError(t, rows.Err())
	return st
}

// crashVerify checks the outcome against what was registered: each sale
// processed once, with one credit entry of its points and one
// sale.processed event, and balances that are the sum of the ledger.
func crashVerify(t *testing.T, dbURL string, sales []crashSale) {
	t.Helper()
	db := crashOpen(t, dbURL)
	defer db.Close()
	q := func(query string, args ...any) *sql.Rows {
		rows, err := db.Reads.Query(query, args...)
		require.NoError(t, err)
		return rows
	}

	type outcome struct {
		status   string
		credited int64
		customer sql.NullString
	}
	got := map[string]outcome{}
	rows := q(`SELECT id, status, points_credited, customer_id FROM sales`)
	for rows.Next() {
		var id string
		var o outcome
		require.NoError(t, rows.Scan(&id, &o.status, &o.credited, &o.customer))
		got[id] = o
	}
	require.NoError(t, rows.Err())
	require.Len(t, got, len(sales), "sales stored")

	type credit struct{ n, points int64 }
	credits := map[string]credit{}
	rows = q(`SELECT source_id, count(*), sum(points) FROM points_entries
		WHERE kind = 'credit' AND source_kind = 'sale' GROUP BY source_id`)
	for rows.Next() {
		var id string
		var c credit
		require.NoError(t, rows.Scan(&id, &c.n, &c.points))
		credits[id] = c
	}
	require.NoError(t, rows.Err())

	events := map[string]int{}
	rows = q(`SELECT subject_id, count(*) FROM events WHERE type = 'sale.processed' GROUP BY subject_id`)
	for rows.Next() {
		var id string
		var n int
		require.NoError(t, rows.Scan(&id, &n))
		events[id] = n
	}
	require.NoError(t, rows.Err())

	type reversal struct{ n, points int64 }
	reversals := map[string]reversal{}
	rows = q(`SELECT source_id, count(*), -sum(points) FROM points_entries
		WHERE kind = 'reversal' AND source_kind = 'return' GROUP BY source_id`)
	for rows.Next() {
		var id string
		var r reversal
		require.NoError(t, rows.Scan(&id, &r.n, &r.points))
		reversals[id] = r
	}
	require.NoError(t, rows.Err())
	applied := map[string]int{}
	rows = q(`SELECT id, status FROM sale_returns`)
	for rows.Next() {
		var id, status string
		require.NoError(t, rows.Scan(&id, &status))
		if status == "PROCESSED" {
			applied[id]++
		}
	}
	require.NoError(t, rows.Err())

	want := map[string]int64{} // customer id → expected balance
	var problems []string
	returns := 0
	for _, s := range sales {
		want[s.customer] += s.points - s.reversed
		o := got[s.id]
		if o.status != s.status || o.credited != s.points || o.customer.String != s.customer {
			problems = append(problems, fmt.Sprintf("sale %s: status %s, %d points credited to %q; want %s, %d to %s",
				s.id, o.status, o.credited, o.customer.String, s.status, s.points, s.customer))
		}
		if s.returnID != "" {
			returns++
			if r := reversals[s.returnID]; r.n != 1 || r.points != s.reversed || applied[s.returnID] != 1 {
				problems = append(problems, fmt.Sprintf("return %s of sale %s: %d reversals of %d points, applied %d; want 1 of %d, applied once",
					s.returnID, s.id, r.n, r.points, applied[s.returnID], s.reversed))
			}
		}
		if c := credits[s.id]; c.n != 1 || c.points != s.points {
			problems = append(problems, fmt.Sprintf("sale %s: %d credit entries of %d points; want 1 of %d", s.id, c.n, c.points, s.points))
		}
		if n := events[s.id]; n != 1 {
			problems = append(problems, fmt.Sprintf("sale %s: %d sale.processed events; want 1", s.id, n))
		}
	}
	if len(problems) > 0 {
		t.Fatalf("%d problems, the first:\n%s", len(problems), strings.Join(problems[:min(len(problems), 10)], "\n"))
	}
	require.Len(t, credits, len(sales), "credit entries of sales that do not exist")
	require.Len(t, reversals, returns, "reversals of returns that do not exist")
	require.Len(t, events, len(sales), "sale.processed events of sales that do not exist")

	var total int64
	rows = q(`SELECT c.id, c.points_balance, COALESCE((SELECT sum(e.points) FROM points_entries e WHERE e.customer_id = c.id), 0)
		FROM customers c`)
	n := 0
	for rows.Next() {
		var id string
		var balance, ledger int64
		require.NoError(t, rows.Scan(&id, &balance, &ledger))
		require.Equal(t, ledger, balance, "customer %s: balance is the sum of the ledger", id)
		require.Equal(t, want[id], balance, "customer %s: balance is the points of the sales", id)
		total += balance
		n++
	}
	require.NoError(t, rows.Err())
	require.Equal(t, crashCustomers, n)

	var other int
	require.NoError(t, db.Reads.QueryRow(`SELECT count(*) FROM points_entries
		WHERE NOT (kind = 'credit' AND source_kind = 'sale') AND NOT (kind = 'reversal' AND source_kind = 'return')`).Scan(&other))
	require.Zero(t, other, "no ledger entries but the sales' credits and the returns' reversals")
	var lots int
	var remaining int64
	require.NoError(t, db.Reads.QueryRow(`SELECT count(*), COALESCE(sum(remaining), 0) FROM points_lots`).Scan(&lots, &remaining))
	require.Equal(t, len(sales), lots, "one lot per credit")
	require.Equal(t, total, remaining, "the lots hold the balance")
}

// TestProcessSaleLastAttemptTimeout: when the last attempt of a sale's job
// fails because its time ran out (River cancels the job's context after
// JobTimeout, two thirds of --rescue-after), the sale is still marked FAILED with
// the reason instead of staying RECEIVED forever.
func TestProcessSaleLastAttemptTimeout(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		a := app.New(&app.Config{DB: db, Log: slog.New(slog.DiscardHandler)})
		sys := viewer.SystemContext(context.Background())
		tn, err := a.Backoffice.CreateTenant(sys, "Mercado Timeout", nil)
		require.NoError(t, err)
		_, err = a.Backoffice.CreateStore(sys, tn.ID, "LOJA-01", "Loja Centro")
		require.NoError(t, err)
		soldAt := time.Now().Add(-time.Minute)
		amount, one := decimal.RequireFromString("12.50"), decimal.NewFromInt(1)
		s, err := a.RegisterSale(viewer.TenantContext(context.Background(), tn.ID), app.SaleInput{
			Protocol: "PARTNER_V1", SaleID: "777", StoreID: "LOJA-01", PosID: "PDV-1", Channel: "STORE",
			Date: &soldAt, Amount: &amount, AmountPayable: &amount,
			Items:    []app.SaleItemInput{{ID: "1", GTIN: "7891000100103", Description: "Café", UnitPrice: &amount, Quantity: &one}},
			Payments: []app.SalePaymentInput{{ID: "1", Amount: &amount, Method: "PIX"}},
		})
		require.NoError(t, err)

		ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
		defer cancel()
		<-ctx.Done() // the job's time is up
		w := &worker.ProcessSaleWorker{App: app.New(&app.Config{DB: db, Clock: time.Now})}
		job := &river.Job[jobs.ProcessSale]{
			JobRow: &rivertype.JobRow{Attempt: 25, MaxAttempts: 25},
			Args:   jobs.ProcessSale{TenantID: tn.ID, SaleID: s.ID},
		}
		require.ErrorIs(t, w.Work(ctx, job), context.DeadlineExceeded)

		got, err := db.Ent.Sale.Get(viewer.TenantContext(context.Background(), tn.ID), s.ID)
		require.NoError(t, err)
		require.Equal(t, "FAILED", string(got.Status))
		require.NotNil(t, got.FailureReason)
		require.Contains(t, *got.FailureReason, "deadline exceeded")
	})
}
