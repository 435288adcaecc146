package wallets_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/apptest"
	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/app/wallets"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/ledger"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/domain/wallet"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/event"
	"github.com/fideliza/fideliza/ent/walletentry"
	"github.com/fideliza/fideliza/ent/wallethold"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/testclock"
	"github.com/fideliza/fideliza/viewer"
)

// holdEnv is a tenant with the default programme (cashback pays on both
// channels, the whole order, any amount) and one customer whose cashback
// wallet was credited.
type holdEnv struct {
	*apptest.Env
	db       *storage.DB
	clock    *testclock.Clock
	customer string
}

func newHoldEnv(t *testing.T, db *storage.DB, cents int64) *holdEnv {
	t.Helper()
	clock := testclock.New(time.Now().UTC())
	env := apptest.New(t, db, apptest.WithClock(clock.Now), apptest.WithTenant("Loja Cashback"))
	e := &holdEnv{Env: env, db: db, clock: clock, customer: apptest.Customer(t, env.App, env.TenantID, 1)}
	e.credit(t, e.customer, cents, "red_seed")
	return e
}

// credit credits cents of cashback to customer, as a cashback campaign's
// redemption source does.
func (e *holdEnv) credit(t *testing.T, customer string, cents int64, source string) {
	t.Helper()
	require.NoError(t, e.db.InTx(e.Ctx, func(tx storage.Tx) error {
		_, err := wallet.Wallets{Dialect: e.db.Dialect, Now: e.clock.Now}.Credit(e.Ctx, tx.Ent, wallet.Move{
			CustomerID: customer, Unit: wallet.Cashback, Cents: cents, SourceKind: walletentry.SourceKindRedemption,
			SourceID: &source, Reason: "cashback of Cashback 10%"})
		return err
	}))
}

func (e *holdEnv) settings(t *testing.T, s backoffice.TenantSettings) {
	t.Helper()
	_, err := e.App.Backoffice.UpdateTenant(viewer.SystemContext(context.Background()), e.TenantID, s)
	require.NoError(t, err)
}

func (e *holdEnv) hold(customer, order, amount, total string) (*wallets.OrderHold, error) {
	return e.App.Wallets.HoldCashback(e.Ctx, wallets.OrderHoldInput{CustomerID: customer, Wallet: "cashback", OrderID: order,
		Amount: money(amount), OrderAmount: money(total)})
}

func (e *holdEnv) capture(id, order, total string) (*wallets.OrderHold, error) {
	return e.App.Wallets.CaptureHold(e.Ctx, id, wallets.CaptureInput{OrderID: order, OrderAmount: money(total)})
}

// requireConsistent checks the wallet's invariants (balance = lots, less
// the debt = entries, what is held within the balance) and answers the
// balance.
func (e *holdEnv) requireConsistent(t *testing.T) int64 {
	t.Helper()
	var balance, pending, debt, lots, entries, held int64
	require.NoError(t, e.db.SQL.QueryRow(`SELECT balance_cents, pending_cents, debt_cents FROM wallets WHERE customer_id = $1`,
		e.customer).Scan(&balance, &pending, &debt))
	require.NoError(t, e.db.SQL.QueryRow(`SELECT COALESCE(SUM(remaining_cents), 0) FROM wallet_lots WHERE customer_id = $1`,
		e.customer).Scan(&lots))
	require.NoError(t, e.db.SQL.QueryRow(`SELECT COALESCE(SUM(amount_cents), 0) FROM wallet_entries WHERE customer_id = $1`,
		e.customer).Scan(&entries))
	require.NoError(t, e.db.SQL.QueryRow(`SELECT COALESCE(SUM(cents), 0) FROM wallet_holds WHERE customer_id = $1 AND status IN ('open', 'taken')`,
		e.customer).Scan(&held))
	require.Equal(t, lots, balance+pending, "balance = the lots' remaining cents")
	require.Equal(t, entries, balance+pending-debt, "balance less the debt = the entries' sum")
	require.LessOrEqual(t, held, balance, "what is held is within the balance")
	return balance
}

// money is s in R$, nil for "".
func money(s string) *decimal.Decimal {
	if s == "" {
		return nil
	}
	return new(decimal.RequireFromString(s))
}

func errCode(err error) string {
	if e, ok := apperr.As(err); ok {
		return e.Code
	}
	return fmt.Sprint(err)
}

// TestCashbackHoldRefusals: each of the programme's rules and each input
// refused, with its code; the same refusals at capture where they apply.
func TestCashbackHoldRefusals(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := newHoldEnv(t, db, 5000) // R$ 50.00
		owing := apptest.Customer(t, e.App, e.TenantID, 2)
		e.credit(t, owing, 1000, "red_owing")
		require.NoError(t, db.InTx(e.Ctx, func(tx storage.Tx) error { // its cashback spent, then taken back
			w := wallet.Wallets{Dialect: db.Dialect, Now: e.clock.Now}
			order, red := "PED-X", "red_owing"
			if _, err := w.Debit(e.Ctx, tx.Ent, wallet.Move{CustomerID: owing, Unit: wallet.Cashback, Cents: 1000,
				SourceKind: walletentry.SourceKindOrder, SourceID: &order}); err != nil {
				return err
			}
			_, err := w.Reverse(e.Ctx, tx.Ent, wallet.Move{CustomerID: owing, Unit: wallet.Cashback, Cents: 1000,
				SourceKind: walletentry.SourceKindRedemption, SourceID: &red})
			return err
		}))
		e.credit(t, owing, 500, "red_owing_2") // settles half the debt

		defaults := backoffice.TenantSettings{CashbackSpendChannels: &[]string{"pdv", "ecommerce"},
			CashbackSpendMaxShare: money("1"), CashbackSpendMin: money("0")}
		for _, c := range []struct {
			name           string
			settings       backoffice.TenantSettings
			customer       string
			wallet, order  string
			amount, total  string
			code, field    string
			capturedAmount string // "": not checked at capture
		}{
			{name: "the programme takes no cashback online", settings: backoffice.TenantSettings{CashbackSpendChannels: &[]string{"pdv"}},
				amount: "10.00", code: "cashback_payment_off", field: "wallet"},
			{name: "spending turned off", settings: backoffice.TenantSettings{CashbackSpendChannels: &[]string{}},
				amount: "10.00", code: "cashback_payment_off", field: "wallet"},
			{name: "below the fewest reais", settings: backoffice.TenantSettings{CashbackSpendMin: money("5.00")},
				amount: "4.99", code: "cashback_below_minimum", field: "amount"},
			{name: "over the share of the order", settings: backoffice.TenantSettings{CashbackSpendMaxShare: money("0.1")},
				amount: "10.01", total: "100.00", code: "cashback_over_share", field: "amount"},
			{name: "more than the balance", amount: "50.01", code: "cashback_insufficient", field: "amount"},
			{name: "a debt open", customer: owing, amount: "0.01", code: "cashback_insufficient", field: "amount"},
			{name: "another wallet", wallet: "gift_card", amount: "1.00", code: "validation_error", field: "wallet"},
			{name: "a fraction of a cent", amount: "1.001", code: "validation_error", field: "amount"},
			{name: "nothing", amount: "0", code: "validation_error", field: "amount"},
			{name: "an order too long for its key", order: fmt.Sprintf("%0110d", 1), amount: "1.00", code: "validation_error", field: "order_id"},
			{name: "an order amount in fractions of a cent", amount: "1.00", total: "10.001", code: "validation_error", field: "order_amount"},
			{name: "an unknown customer", customer: "cus_00000000000000000000000000", amount: "1.00", code: "not_found"},
		} {
			t.Run(c.name, func(t *testing.T) {
				e.settings(t, defaults)
				e.settings(t, c.settings)
				in := wallets.OrderHoldInput{CustomerID: e.customer, Wallet: "cashback", OrderID: "PED-1", Amount: money(c.amount)}
				if c.customer != "" {
					in.CustomerID = c.customer
				}
				if c.wallet != "" {
					in.Wallet = c.wallet
				}
				if c.order != "" {
					in.OrderID = c.order
				}
				in.OrderAmount = money(c.total)
				_, err := e.App.Wallets.HoldCashback(e.Ctx, in)
				require.Equal(t, c.code, errCode(err))
				if e, ok := apperr.As(err); ok && c.field != "" {
					require.Equal(t, c.field, e.Field, "%v", err)
				}
			})
		}

		// At capture: the channel turned off and the share of the order
		// are checked again.
		e.settings(t, defaults)
		h, err := e.hold(e.customer, "PED-2", "20.00", "")
		require.NoError(t, err)
		e.settings(t, backoffice.TenantSettings{CashbackSpendChannels: &[]string{"pdv"}})
		_, err = e.capture(h.Hold.ID, "PED-2", "100.00")
		require.Equal(t, "cashback_payment_off", errCode(err))
		e.settings(t, backoffice.TenantSettings{CashbackSpendChannels: &[]string{"ecommerce"}, CashbackSpendMaxShare: money("0.2")})
		_, err = e.capture(h.Hold.ID, "PED-2", "99.90")
		require.Equal(t, "cashback_over_share", errCode(err), "R$ 20.00 is more than a fifth of R$ 99.90")
		_, err = e.capture(h.Hold.ID, "PED-3", "100.00")
		require.Equal(t, "cashback_hold_foreign", errCode(err), "another order's")
		_, err = e.capture("whd_00000000000000000000000000", "PED-2", "100.00")
		require.Equal(t, "not_found", errCode(err))
		_, err = e.capture(h.Hold.ID, "PED-2", "")
		require.Equal(t, "validation_error", errCode(err), "order_amount is required")
		r, err := e.capture(h.Hold.ID, "PED-2", "100.00")
		require.NoError(t, err)
		require.Equal(t, int64(-2000), r.Entry.AmountCents)
		require.Equal(t, int64(3000), e.requireConsistent(t))

		_, err = e.App.Backoffice.UpdateTenant(viewer.SystemContext(context.Background()), e.TenantID,
			backoffice.TenantSettings{CashbackSpendChannels: &[]string{"till"}, CashbackSpendMaxShare: money("1.5"), CashbackSpendMin: money("0.001")})
		var ae *apperr.Error
		require.ErrorAs(t, err, &ae)
		require.ElementsMatch(t, []string{"cashback_spend_channels", "cashback_spend_max_share", "cashback_spend_min"},
			[]string{ae.Details[0].Field, ae.Details[1].Field, ae.Details[2].Field})
	})
}

// TestOnlineCashbackPayment: an online order pays part with cashback: the
// offer says how much, a hold for the order (the same order asked again
// answers it; other cents under it are refused), its capture debits once
// (cashback.spent) and replays, its rollback gives the cents back once as a
// refund spendable at once (cashback.refunded), and an open hold rolled
// back is released.
func TestOnlineCashbackPayment(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := newHoldEnv(t, db, 3000) // R$ 30.00
		e.settings(t, backoffice.TenantSettings{CashbackSpendMaxShare: money("0.25"), CashbackSpendMin: money("2.00")})
		tenant, err := db.Ent.Tenant.Get(viewer.SystemContext(e.Ctx), e.TenantID)
		require.NoError(t, err)
		offer := func(channel string, total *decimal.Decimal) *wallets.CashbackOffer {
			o, err := e.App.Wallets.CashbackOffer(e.Ctx, db.Ent, tenant, e.customer, channel, total)
			require.NoError(t, err)
			return o
		}
		o := offer("ecommerce", money("99.99"))
		require.Equal(t, "0.25", o.MaxShare.String())
		o.MaxShare = decimal.Zero
		require.Equal(t, &wallets.CashbackOffer{Allowed: true, Balance: 3000, Available: 3000, Min: 200, MaxAmount: 2499}, o,
			"a quarter, in cents down")
		require.Equal(t, int64(3000), offer("pdv", nil).MaxAmount, "no cart: what is available")
		require.Zero(t, offer("pdv", money("7.99")).MaxAmount, "below the fewest reais")

		h, err := e.hold(e.customer, "PED-1", "20.00", "100.00")
		require.NoError(t, err)
		require.Equal(t, [4]any{wallethold.StatusOpen, int64(2000), "ecommerce:cashback:PED-1", false},
			[4]any{h.Hold.Status, h.Hold.Cents, h.Hold.Session, h.Replayed})
		again, err := e.hold(e.customer, "PED-1", "20.00", "")
		require.NoError(t, err)
		require.True(t, again.Replayed)
		require.Equal(t, h.Hold.ID, again.Hold.ID)
		_, err = e.hold(e.customer, "PED-1", "10.00", "")
		require.Equal(t, "cashback_hold_session", errCode(err))
		require.Equal(t, int64(1000), offer("ecommerce", nil).Available, "R$ 20.00 are held")
		_, err = e.hold(e.customer, "PED-2", "10.01", "")
		require.Equal(t, "cashback_insufficient", errCode(err))

		c, err := e.capture(h.Hold.ID, "PED-1", "100.00")
		require.NoError(t, err)
		require.Equal(t, wallethold.StatusSpent, c.Hold.Status)
		require.Equal(t, [4]any{walletentry.KindDebit, int64(-2000), int64(1000), "PED-1"},
			[4]any{c.Entry.Kind, c.Entry.AmountCents, c.Entry.BalanceAfterCents, *c.Entry.SourceID})
		replay, err := e.capture(h.Hold.ID, "PED-1", "100.00")
		require.NoError(t, err)
		require.True(t, replay.Replayed)
		require.Equal(t, c.Entry.ID, replay.Entry.ID)
		require.Equal(t, int64(1000), e.requireConsistent(t))
		spent, err := db.Ent.Event.Query().Where(event.Type(outbox.CashbackSpent)).Only(e.Ctx)
		require.NoError(t, err)
		require.Equal(t, []any{"PED-1", h.Hold.ID, "ecommerce", "20.00"},
			[]any{spent.Data["order_id"], spent.Data["hold_id"], spent.Data["channel"], spent.Data["amount"]})

		rb, err := e.App.Wallets.RollbackHold(e.Ctx, h.Hold.ID, "pedido cancelado")
		require.NoError(t, err)
		require.Equal(t, wallethold.StatusReleased, rb.Hold.Status)
		require.Equal(t, [3]any{walletentry.KindRefund, int64(2000), int64(3000)}, [3]any{rb.Entry.Kind, rb.Entry.AmountCents, rb.Entry.BalanceAfterCents})
		require.Equal(t, "PED-1", rb.OrderID)
		again2, err := e.App.Wallets.RollbackHold(e.Ctx, h.Hold.ID, "pedido cancelado")
		require.NoError(t, err)
		require.True(t, again2.Replayed)
		require.Equal(t, rb.Entry.ID, again2.Entry.ID)
		_, err = e.capture(h.Hold.ID, "PED-1", "100.00")
		require.Equal(t, "cashback_hold_unavailable", errCode(err), "a hold rolled back is spent no more")
		refunded, err := db.Ent.Event.Query().Where(event.Type(outbox.CashbackRefunded)).Only(e.Ctx)
		require.NoError(t, err)
		require.Equal(t, map[string]any{"kind": "order", "id": "PED-1"}, refunded.Data["source"])
		require.Equal(t, int64(3000), offer("ecommerce", nil).Available, "the refund is spendable at once")

		open, err := e.hold(e.customer, "PED-3", "5.00", "")
		require.NoError(t, err)
		rb, err = e.App.Wallets.RollbackHold(e.Ctx, open.Hold.ID, "pedido abandonado")
		require.NoError(t, err)
		require.Equal(t, wallethold.StatusReleased, rb.Hold.Status)
		require.Nil(t, rb.Entry)
		require.False(t, rb.Replayed)
		_, err = e.App.Wallets.RollbackHold(e.Ctx, open.Hold.ID, "")
		require.Equal(t, "validation_error", errCode(err))
		require.Equal(t, int64(3000), e.requireConsistent(t))
	})
}

// TestCashbackHoldsNeverOverspend: 200 concurrent orders of one customer
// each hold and capture R$ 1.00 of a R$ 120.00 wallet, a fifth of them
// rolled back once captured; the wallet never spends more than it holds,
// every capture debits once, and afterwards balance = lots = entries.
func TestCashbackHoldsNeverOverspend(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		t.Parallel()
		e := newHoldEnv(t, db, 12_000)
		const n = 200
		captured, refunded, refused := make([]bool, n), make([]bool, n), make([]bool, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				order := fmt.Sprintf("PED-%d", i)
				h, err := e.hold(e.customer, order, "1.00", "10.00")
				if errCode(err) == "cashback_insufficient" {
					refused[i] = true
					return
				}
				if err != nil {
					errs[i] = err
					return
				}
				if _, errs[i] = e.capture(h.Hold.ID, order, "10.00"); errs[i] != nil {
					return
				}
				captured[i] = true
				if i%5 == 0 {
					_, errs[i] = e.App.Wallets.RollbackHold(e.Ctx, h.Hold.ID, "pedido cancelado")
					refunded[i] = errs[i] == nil
				}
			})
		}
		close(start)
		wg.Wait()
		var spent, back, nRefused int64
		for i := range n {
			require.NoError(t, errs[i], "order %d", i)
			if captured[i] {
				spent += 100
			}
			if refunded[i] {
				back += 100
			}
			if refused[i] {
				nRefused++
			}
		}
		require.LessOrEqual(t, spent-back, int64(12_000), "never more than the balance")
		require.GreaterOrEqual(t, spent, int64(12_000), "the balance was all spent, some of it twice after refunds")
		require.Equal(t, int64(n)*100, spent+nRefused*100, "every order held and captured, or was refused")
		require.Equal(t, 12_000-spent+back, e.requireConsistent(t))
		debits, err := db.Ent.WalletEntry.Query().Where(walletentry.KindEQ(walletentry.KindDebit)).Count(e.Ctx)
		require.NoError(t, err)
		require.Equal(t, spent/100, int64(debits), "one debit per capture")
		events, err := db.Ent.Event.Query().Where(event.Type(outbox.CashbackSpent)).Count(e.Ctx)
		require.NoError(t, err)
		require.Equal(t, debits, events)
	})
}

// TestLapsedCashbackHoldsReleased: the wallets' upkeep marks released the
// holds past their 15 minutes and grace, once their cents count no more.
func TestLapsedCashbackHoldsReleased(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := newHoldEnv(t, db, 1000)
		h, err := e.hold(e.customer, "PED-1", "10.00", "")
		require.NoError(t, err)
		upkeep := func() *ent.WalletHold {
			require.NoError(t, e.App.Wallets.UpkeepWallets(viewer.SystemContext(context.Background()), jobs.UpkeepWallets{}))
			hold, err := db.Ent.WalletHold.Get(e.Ctx, h.Hold.ID)
			require.NoError(t, err)
			return hold
		}
		e.clock.Advance(ledger.HoldTTL)
		require.Equal(t, wallethold.StatusOpen, upkeep().Status, "within its grace")
		e.clock.Advance(ledger.HoldGrace)
		hold := upkeep()
		require.Equal(t, wallethold.StatusReleased, hold.Status)
		require.NotNil(t, hold.ClosedAt)
		_, err = e.capture(h.Hold.ID, "PED-1", "10.00")
		require.Equal(t, "cashback_hold_unavailable", errCode(err))
		again, err := e.hold(e.customer, "PED-2", "10.00", "")
		require.NoError(t, err, "its cents are available again")
		require.Equal(t, wallethold.StatusOpen, again.Hold.Status)
	})
}
