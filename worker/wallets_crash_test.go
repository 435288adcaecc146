package worker_test

import (
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/internal/crashtest"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// The wallets crash test's sizes: the sales, each paying R$ 1.00 of its
// customer's cashback and R$ 1.00 of a gift card of its own; the cashback
// each customer starts with and each card's balance, in cents.
const (
	walletsCrashSales    = 120
	walletsCrashCashback = 2000
	walletsCrashCard     = 500
)

// TestServeCrashWalletPayments: sales paying part with cashback and part
// with a gift card, each with its holds, are registered twice while serve
// processes them, and serve is killed with SIGKILL in the midst of
// processing; a new serve gets every sale once more. In the end each sale
// is processed once, its cashback hold and its card hold each debited
// exactly once (one entry, one event, the hold spent), and every wallet's
// and card's balance is the sum of its entries.
func TestServeCrashWalletPayments(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills serve processes; skipped with -short")
	}
	t.Parallel()
	bin := crashtest.Build(t)
	for _, d := range storagetest.Dialects() {
		t.Run(d, func(t *testing.T) { walletsCrashRun(t, bin, d) })
	}
}

func walletsCrashRun(t *testing.T, bin, dialectName string) {
	dbURL := storagetest.URL(t, dialectName, true)
	till := crashtest.NewTill(t, dbURL)
	codes := crashtest.FundWallets(t, dbURL, till.Tenant, walletsCrashCashback, walletsCrashSales, walletsCrashCard)
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
	one := decimal.NewFromInt(1)
	paid := make([][]crashtest.Paid, walletsCrashSales+1)
	for n := 1; n <= walletsCrashSales; n++ {
		paid[n] = []crashtest.Paid{till.HoldWallet(t, url, n, "", one), till.HoldWallet(t, url, n, codes[n-1], one)}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for n := int(next.Add(1)); n <= walletsCrashSales; n = int(next.Add(1)) {
				for range 2 {
					if status := till.RegisterPaid(t, url, n, paid[n]...); status != 202 && status != 0 {
						t.Errorf("sale %d: status %d", n, status)
					}
				}
			}
		})
	}
	deadline := time.Now().Add(time.Minute)
	for crashtest.Counts(t, dbURL).Processed < walletsCrashSales/4 {
		if time.Now().After(deadline) {
			t.Fatalf("no quarter of the sales processed after a minute; log:\n%s", p.Tail())
		}
		time.Sleep(2 * time.Millisecond) // crash timing: polls so the kill lands just past a quarter
	}
	p.Kill(t)
	killed := time.Now()
	wg.Wait()
	st := crashtest.Counts(t, dbURL)
	t.Logf("%s: killed with %d of %d sales processed, %d jobs not completed", dialectName, st.Processed, walletsCrashSales, st.JobsLeft)
	require.Less(t, st.Processed, walletsCrashSales, "serve was killed before it processed every sale")

	p, url = serve("serve-2")
	for n := 1; n <= walletsCrashSales; n++ {
		require.Equal(t, 202, till.RegisterPaid(t, url, n, paid[n]...), "sale %d sent again", n)
	}
	crashtest.WaitProcessed(t, dbURL, killed.Add(serveRecovery), p.Tail)
	p.Stop(t)
	verifyWalletsPaid(t, dbURL)
}

// verifyWalletsPaid checks every sale processed once and paid R$ 1.00 by
// each of its two holds, each debited once, and the balances.
func verifyWalletsPaid(t *testing.T, dbURL string) {
	t.Helper()
	db := crashtest.Open(t, dbURL)
	defer db.Close()
	count := func(query string) int {
		var n int
		require.NoError(t, db.Reads.QueryRow(query).Scan(&n))
		return n
	}
	require.Equal(t, walletsCrashSales, count(`SELECT count(*) FROM sales WHERE status = 'PROCESSED'`), "every sale processed once")
	require.Equal(t, walletsCrashSales, count(`SELECT count(*) FROM sales`), "every sale stored once")
	for _, q := range []string{
		`SELECT count(DISTINCT source_id) FROM wallet_entries WHERE kind = 'debit' AND amount_cents = -100 AND source_id IN (SELECT id FROM sales)`,
		`SELECT count(*) FROM wallet_entries WHERE kind = 'debit'`,
		`SELECT count(DISTINCT source_id) FROM gift_card_entries WHERE kind = 'debit' AND amount_cents = -100 AND source_id IN (SELECT id FROM sales)`,
		`SELECT count(*) FROM gift_card_entries WHERE kind = 'debit'`,
		`SELECT count(*) FROM events WHERE type = 'cashback.spent'`,
		`SELECT count(*) FROM events WHERE type = 'gift_card.redeemed'`,
		`SELECT count(*) FROM wallet_holds WHERE status = 'spent' AND wallet = 'cashback' AND sale_id IS NOT NULL`,
		`SELECT count(*) FROM wallet_holds WHERE status = 'spent' AND wallet = 'gift_card' AND sale_id IS NOT NULL`,
	} {
		require.Equal(t, walletsCrashSales, count(q), "one per sale: %s", q)
	}
	require.Zero(t, count(`SELECT count(*) FROM wallets w WHERE w.balance_cents <>
		(SELECT COALESCE(sum(e.amount_cents), 0) FROM wallet_entries e WHERE e.customer_id = w.customer_id AND e.wallet = w.kind)`),
		"every wallet's balance is its entries")
	require.Zero(t, count(`SELECT count(*) FROM gift_cards c WHERE c.balance_cents <> `+
		`(SELECT COALESCE(sum(e.amount_cents), 0) FROM gift_card_entries e WHERE e.gift_card_id = c.id) OR c.balance_cents <> 400`),
		"every card paid R$ 1.00 of its R$ 5.00, its balance its entries")
}
