// Package wallet writes a customer's money wallets (cashback in R$, whole
// cents) with the points ledger's invariants: a credit opens a lot, pending
// for the programme's pending period and expiring after its validity; a
// debit spends the lots expiring first and never goes below zero; a lot
// expires by itself; a reversal takes back from the balance as far as it
// goes and owes the rest as a debt the next credits settle; a hold reserves
// cents a sale or an order then spends once, or gives back in a refund
// (holds.go). The wallet's balance plus its pending cents is the sum of its
// lots' remaining cents, and that less the debt is the sum of its entries.
// Each function runs inside the caller's transaction (c is bound to it) and
// locks the customer first (the lock the points ledger takes), so the moves
// of one customer are serialised.
package wallet

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fideliza/fideliza/domain/ledger"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/domain/points"
	"github.com/fideliza/fideliza/ent"
	entwallet "github.com/fideliza/fideliza/ent/wallet"
	"github.com/fideliza/fideliza/ent/walletentry"
	"github.com/fideliza/fideliza/ent/walletlot"
)

// Unit is a kind of money wallet.
type Unit string

// Cashback is the wallet of the R$ cashback campaigns credit.
const Cashback Unit = "cashback"

// GiftCard is a gift card bound to the customer, each card a wallet of its
// own; its moves are domain/giftcard's, not this package's.
const GiftCard Unit = "gift_card"

// ErrInsufficient is a debit larger than the spendable balance.
var ErrInsufficient = errors.New("insufficient wallet balance")

// ErrDebtOpen is a debit while the wallet owes cents: nothing can be spent
// until credits have settled the debt. It is an ErrInsufficient.
var ErrDebtOpen = fmt.Errorf("%w: a debt is open", ErrInsufficient)

// Wallets writes wallet moves.
type Wallets struct {
	Dialect string
	Now     func() time.Time // the clock of entries, releases and expiries
}

// Move is what every move names: whose wallet, how many cents, and why.
type Move struct {
	CustomerID string
	Unit       Unit
	Cents      int64 // positive
	SourceKind walletentry.SourceKind
	SourceID   *string // with SourceKind, the move of one kind happens once
	StoreCode  string
	Reason     string
}

// Result is the entry a move wrote, or found when it had been written.
type Result struct {
	Entry    *ent.WalletEntry
	Replayed bool // the source had already moved the wallet: nothing was written
}

// now is the wallets' clock in UTC, to the microsecond both databases keep.
func (w Wallets) now() time.Time { return w.Now().UTC().Truncate(time.Microsecond) }

// Credit adds cents in a lot expiring after the tenant's points validity
// (points_expiry_months), pending for its points_pending_days; cents
// credited spendable at once settle a debt first. It records
// cashback.credited.
func (w Wallets) Credit(ctx context.Context, c *ent.Client, m Move) (*Result, error) {
	return w.credit(ctx, c, m, walletentry.KindCredit)
}

// Refund gives back cents a payment spent (an order rolled back, a sale
// returned) in a lot spendable at once, expiring after the tenant's points
// validity from now as a credit does: the entries do not say which lots a
// debit took, and cents given back already past their expiry would expire
// at once. They settle a debt first. It records cashback.refunded.
func (w Wallets) Refund(ctx context.Context, c *ent.Client, m Move) (*Result, error) {
	return w.credit(ctx, c, m, walletentry.KindRefund)
}

// credit writes a credit or a refund (kind): only a credit waits out the
// pending period.
func (w Wallets) credit(ctx context.Context, c *ent.Client, m Move, kind walletentry.Kind) (*Result, error) {
	if m.Cents <= 0 {
		return nil, fmt.Errorf("%s of %d cents", kind, m.Cents)
	}
	cust, wal, err := w.lock(ctx, c, m.CustomerID, m.Unit)
	if err != nil {
		return nil, err
	}
	if prior, err := findSource(ctx, c, m, kind); prior != nil || err != nil {
		return &Result{Entry: prior, Replayed: prior != nil}, err
	}
	tenant, err := c.Tenant.Get(ctx, cust.TenantID)
	if err != nil {
		return nil, err
	}
	loc, err := points.Zone(tenant.TimeZone)
	if err != nil {
		return nil, err
	}
	now := w.now()
	expires := points.ExpiresAt(now, tenant.PointsExpiryMonths, loc)
	var pendingUntil *time.Time
	var settled, pending int64
	if tenant.PointsPendingDays > 0 && kind == walletentry.KindCredit {
		pendingUntil, pending = new(points.DaysAfter(now, tenant.PointsPendingDays, loc)), m.Cents
	} else {
		settled = min(m.Cents, wal.DebtCents)
	}
	kept := m.Cents - settled - pending
	entry, err := newEntry(c, cust, m, kind, now).
		SetAmountCents(m.Cents).SetBalanceAfterCents(wal.BalanceCents + kept).SetDebtAfterCents(wal.DebtCents - settled).
		SetExpiresAt(expires).SetNillablePendingUntil(pendingUntil).
		Save(ctx)
	if err != nil {
		return nil, err
	}
	err = c.WalletLot.Create().
		SetTenantID(cust.TenantID).SetCustomerID(cust.ID).SetWallet(walletlot.Wallet(m.Unit)).SetEntryID(entry.ID).
		SetCreatedAt(now).SetAmountCents(m.Cents).SetRemainingCents(kept + pending).SetExpiresAt(expires).
		SetNillablePendingUntil(pendingUntil).
		Exec(ctx)
	if err != nil {
		return nil, err
	}
	err = c.Wallet.Update().Where(entwallet.ID(wal.ID)).
		AddBalanceCents(kept).AddPendingCents(pending).AddDebtCents(-settled).Exec(ctx)
	if err != nil {
		return nil, err
	}
	data := map[string]any{
		"customer_id": cust.ID, "entry_id": entry.ID, "wallet": string(m.Unit), "amount": Reais(m.Cents),
		"expires_at": expires.Format(time.RFC3339Nano), "pending_until": nil, "reason": m.Reason,
	}
	if pendingUntil != nil {
		data["pending_until"] = pendingUntil.Format(time.RFC3339Nano)
	}
	typ := outbox.CashbackCredited
	if kind == walletentry.KindRefund {
		typ = outbox.CashbackRefunded
		data["balance_after"] = Reais(entry.BalanceAfterCents)
		data["source"] = map[string]any{"kind": string(m.SourceKind), "id": m.SourceID}
	}
	if err := outbox.Record(ctx, c, now, cust.TenantID, typ, cust.ID, data); err != nil {
		return nil, err
	}
	return &Result{Entry: entry}, nil
}

// Debit takes cents, from the lots expiring first; ErrInsufficient when
// the spendable balance is short, ErrDebtOpen while a debt is open.
func (w Wallets) Debit(ctx context.Context, c *ent.Client, m Move) (*Result, error) {
	if m.Cents <= 0 {
		return nil, fmt.Errorf("debit of %d cents", m.Cents)
	}
	cust, wal, err := w.lock(ctx, c, m.CustomerID, m.Unit)
	if err != nil {
		return nil, err
	}
	if prior, err := findSource(ctx, c, m, walletentry.KindDebit); prior != nil || err != nil {
		return &Result{Entry: prior, Replayed: prior != nil}, err
	}
	if wal.DebtCents > 0 {
		return nil, ErrDebtOpen
	}
	if wal.BalanceCents < m.Cents {
		return nil, ErrInsufficient
	}
	entry, err := w.spendLots(ctx, c, cust, wal, m, w.now())
	if err != nil {
		return nil, err
	}
	return &Result{Entry: entry}, nil
}

// spendLots takes m's cents from the customer's (locked) lots expiring
// first, lowers the balance and writes the debit entry.
func (w Wallets) spendLots(ctx context.Context, c *ent.Client, cust *ent.Customer, wal *ent.Wallet, m Move,
	now time.Time) (*ent.WalletEntry, error) {
	lots, err := c.WalletLot.Query().
		Where(walletlot.CustomerID(cust.ID), walletlot.WalletEQ(walletlot.Wallet(m.Unit)), walletlot.RemainingCentsGT(0),
			walletlot.ExpiresAtGT(now), walletlot.PendingUntilIsNil()).
		All(ctx)
	if err != nil {
		return nil, err
	}
	live := make([]points.Lot, len(lots))
	for i, lot := range lots {
		live[i] = points.Lot{ID: lot.ID, Remaining: lot.RemainingCents, ExpiresAt: lot.ExpiresAt}
	}
	// points.Spend is the ledger's order, in any unit: those expiring
	// first first, ties by id.
	takes, err := points.Spend(live, m.Cents)
	if errors.Is(err, points.ErrInsufficient) {
		return nil, ErrInsufficient // lots past their expiry the expiry job has not reached
	}
	if err != nil {
		return nil, err
	}
	for _, t := range takes {
		n, err := c.WalletLot.Update().
			Where(walletlot.ID(t.LotID), walletlot.RemainingCentsGTE(t.Points)).
			AddRemainingCents(-t.Points).Save(ctx)
		if err != nil {
			return nil, err
		}
		if n != 1 {
			return nil, fmt.Errorf("wallet lot %s changed under a locked customer", t.LotID)
		}
	}
	return w.take(ctx, c, cust, wal, m, walletentry.KindDebit, now)
}

// Expire takes what is left of a lot whose time has come; it does nothing
// for a lot spent, expired, pending or not due, so a retried job is
// harmless.
func (w Wallets) Expire(ctx context.Context, c *ent.Client, lotID string) (*Result, error) {
	lot, err := c.WalletLot.Get(ctx, lotID)
	if err != nil {
		return nil, err
	}
	cust, wal, err := w.lock(ctx, c, lot.CustomerID, Unit(lot.Wallet))
	if err != nil {
		return nil, err
	}
	now := w.now()
	lot, err = c.WalletLot.Get(ctx, lotID) // re-read under the lock
	if err != nil || lot.RemainingCents == 0 || lot.ExpiresAt.After(now) || lot.PendingUntil != nil {
		return nil, err // a pending lot expires once released
	}
	if err := c.WalletLot.UpdateOneID(lot.ID).SetRemainingCents(0).Exec(ctx); err != nil {
		return nil, err
	}
	entry, err := w.take(ctx, c, cust, wal, Move{
		CustomerID: cust.ID, Unit: Unit(lot.Wallet), Cents: lot.RemainingCents,
		SourceKind: walletentry.SourceKindLot, SourceID: &lot.ID, Reason: "cashback expired",
	}, walletentry.KindExpiration, now)
	if err != nil {
		return nil, err
	}
	return &Result{Entry: entry}, nil
}

// Release makes a pending lot's cents spendable once its pending period is
// over: they settle the wallet's debt first, and the rest joins the
// balance. It does nothing for a lot released or not due. The entries' sum
// does not move: the cents were entered when credited.
func (w Wallets) Release(ctx context.Context, c *ent.Client, lotID string) error {
	lot, err := c.WalletLot.Get(ctx, lotID)
	if err != nil {
		return err
	}
	_, wal, err := w.lock(ctx, c, lot.CustomerID, Unit(lot.Wallet))
	if err != nil {
		return err
	}
	lot, err = c.WalletLot.Get(ctx, lotID) // re-read under the lock
	if err != nil || lot.PendingUntil == nil || lot.PendingUntil.After(w.now()) {
		return err
	}
	settled := min(lot.RemainingCents, wal.DebtCents)
	if err := c.WalletLot.UpdateOneID(lot.ID).ClearPendingUntil().AddRemainingCents(-settled).Exec(ctx); err != nil {
		return err
	}
	return c.Wallet.Update().Where(entwallet.ID(wal.ID)).AddPendingCents(-lot.RemainingCents).
		AddBalanceCents(lot.RemainingCents - settled).AddDebtCents(-settled).Exec(ctx)
}

// Reverse takes back cents a credit gave (a return): pending cents first,
// the latest pending first; then the balance, the lots expiring first
// first; what was already spent becomes a debt that the next credits
// settle. The entry carries the whole reversal, so the balance less the
// debt stays the sum of the entries.
func (w Wallets) Reverse(ctx context.Context, c *ent.Client, m Move) (*Result, error) {
	if m.Cents <= 0 {
		return nil, fmt.Errorf("reversal of %d cents", m.Cents)
	}
	cust, wal, err := w.lock(ctx, c, m.CustomerID, m.Unit)
	if err != nil {
		return nil, err
	}
	if prior, err := findSource(ctx, c, m, walletentry.KindReversal); prior != nil || err != nil {
		return &Result{Entry: prior, Replayed: prior != nil}, err
	}
	now := w.now()
	fromPending := min(m.Cents, wal.PendingCents)
	taken := min(m.Cents-fromPending, wal.BalanceCents)
	mine := c.WalletLot.Query().
		Where(walletlot.CustomerID(cust.ID), walletlot.WalletEQ(walletlot.Wallet(m.Unit)), walletlot.RemainingCentsGT(0))
	pending := mine.Clone().Where(walletlot.PendingUntilNotNil()).
		Order(ent.Desc(walletlot.FieldPendingUntil), ent.Desc(walletlot.FieldID))
	spendable := mine.Clone().Where(walletlot.PendingUntilIsNil()).
		Order(ent.Asc(walletlot.FieldExpiresAt), ent.Asc(walletlot.FieldID))
	for _, from := range []struct {
		lots *ent.WalletLotQuery
		n    int64
	}{{pending, fromPending}, {spendable, taken}} {
		if err := takeFromLots(ctx, c, from.lots, from.n); err != nil {
			return nil, fmt.Errorf("customer %s: %w", cust.ID, err)
		}
	}
	owed := m.Cents - fromPending - taken
	changed, err := c.Wallet.Update().
		Where(entwallet.ID(wal.ID), entwallet.BalanceCentsGTE(taken), entwallet.PendingCentsGTE(fromPending)).
		AddBalanceCents(-taken).AddPendingCents(-fromPending).AddDebtCents(owed).
		Save(ctx)
	if err != nil {
		return nil, err
	}
	if changed != 1 {
		return nil, fmt.Errorf("wallet %s changed under its customer's lock", wal.ID)
	}
	entry, err := newEntry(c, cust, m, walletentry.KindReversal, now).
		SetAmountCents(-m.Cents).SetBalanceAfterCents(wal.BalanceCents - taken).SetDebtAfterCents(wal.DebtCents + owed).
		Save(ctx)
	if err != nil {
		return nil, err
	}
	return &Result{Entry: entry}, nil
}

// takeFromLots takes n cents from the lots, in the query's order.
func takeFromLots(ctx context.Context, c *ent.Client, q *ent.WalletLotQuery, n int64) error {
	if n == 0 {
		return nil
	}
	lots, err := q.All(ctx)
	if err != nil {
		return err
	}
	for _, lot := range lots {
		k := min(n, lot.RemainingCents)
		if err := c.WalletLot.UpdateOneID(lot.ID).AddRemainingCents(-k).Exec(ctx); err != nil {
			return err
		}
		if n -= k; n == 0 {
			return nil
		}
	}
	return fmt.Errorf("its wallet lots hold %d cents fewer than its wallet", n)
}

// take writes the entry of cents leaving the balance and lowers the
// balance; the conditional update and the database's check refuse a
// negative balance even if a lock were missed.
func (w Wallets) take(ctx context.Context, c *ent.Client, cust *ent.Customer, wal *ent.Wallet, m Move,
	kind walletentry.Kind, now time.Time) (*ent.WalletEntry, error) {
	changed, err := c.Wallet.Update().
		Where(entwallet.ID(wal.ID), entwallet.BalanceCentsGTE(m.Cents)).
		AddBalanceCents(-m.Cents).Save(ctx)
	if err != nil {
		return nil, err
	}
	if changed != 1 {
		return nil, ErrInsufficient
	}
	return newEntry(c, cust, m, kind, now).
		SetAmountCents(-m.Cents).SetBalanceAfterCents(wal.BalanceCents - m.Cents).SetDebtAfterCents(wal.DebtCents).
		Save(ctx)
}

// newEntry is the entry of m, its amounts left to the caller.
func newEntry(c *ent.Client, cust *ent.Customer, m Move, kind walletentry.Kind, now time.Time) *ent.WalletEntryCreate {
	return c.WalletEntry.Create().
		SetTenantID(cust.TenantID).SetCustomerID(cust.ID).SetCreatedAt(now).
		SetWallet(walletentry.Wallet(m.Unit)).SetKind(kind).
		SetSourceKind(m.SourceKind).SetNillableSourceID(m.SourceID).SetStoreCode(m.StoreCode).SetReason(m.Reason)
}

// lock locks the customer (ledger.LockCustomer: the points ledger's lock,
// so a customer's points and wallets move one transaction at a time) and
// reads its wallet of unit, opening it when the customer has none yet: the
// lock makes the opening single, and the unique index refuses a second.
func (w Wallets) lock(ctx context.Context, c *ent.Client, customerID string, u Unit) (*ent.Customer, *ent.Wallet, error) {
	cust, err := ledger.LockCustomer(ctx, c, w.Dialect, customerID)
	if err != nil {
		return nil, nil, err
	}
	wal, err := c.Wallet.Query().Where(entwallet.CustomerID(cust.ID), entwallet.KindEQ(entwallet.Kind(u))).Only(ctx)
	if ent.IsNotFound(err) {
		wal, err = c.Wallet.Create().SetTenantID(cust.TenantID).SetCustomerID(cust.ID).SetKind(entwallet.Kind(u)).
			SetCreatedAt(w.now()).Save(ctx)
	}
	return cust, wal, err
}

// findSource returns the entry an earlier move of the same source and kind
// wrote.
func findSource(ctx context.Context, c *ent.Client, m Move, kind walletentry.Kind) (*ent.WalletEntry, error) {
	if m.SourceID == nil {
		return nil, nil
	}
	e, err := c.WalletEntry.Query().Where(
		walletentry.CustomerID(m.CustomerID), walletentry.WalletEQ(walletentry.Wallet(m.Unit)), walletentry.KindEQ(kind),
		walletentry.SourceKindEQ(m.SourceKind), walletentry.SourceID(*m.SourceID),
	).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	return e, err
}
