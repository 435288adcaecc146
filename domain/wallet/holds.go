package wallet

import (
	"context"
	"errors"
	"fmt"
	"time"

	entsql "entgo.io/ent/dialect/sql"

	"github.com/fideliza/fideliza/domain/ledger"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/predicate"
	entwallet "github.com/fideliza/fideliza/ent/wallet"
	"github.com/fideliza/fideliza/ent/walletentry"
	"github.com/fideliza/fideliza/ent/wallethold"
	"github.com/fideliza/fideliza/ent/walletlot"
)

// A wallet's holds live as the points holds do (ledger.HoldTTL, then
// ledger.HoldGrace) and are owned alike (ledger.HoldOwner).

// ErrHoldUnavailable is a hold that is unknown, another customer's, lapsed,
// released, or already taken by a sale or order.
var ErrHoldUnavailable = errors.New("wallet hold unavailable")

// ErrHoldForeign is a hold used by other than its owner (ledger.HoldOwner).
var ErrHoldForeign = errors.New("wallet hold of another channel, order or store")

// ErrHoldSession is a hold asked again under a session already holding
// other cents, another wallet's or another customer's.
var ErrHoldSession = errors.New("the session already holds other cents")

// ErrSourceSpent is a hold whose sale or order another hold of the same
// wallet already paid: a sale or an order pays once with each wallet.
var ErrSourceSpent = errors.New("the sale or order already paid with another hold of the wallet")

// Hold reserves cents of a customer's wallet, or of a gift card (Unit
// GiftCard, CardID): domain/giftcard places those.
type Hold struct {
	CustomerID string // "" for a gift card's hold placed without a customer
	Unit       Unit
	CardID     string // the gift card of a GiftCard hold
	Channel    wallethold.Channel
	Session    string
	StoreCode  string
	Cents      int64
}

// Placed is a wallet hold as ledger.HoldOwner reads it.
func Placed(h *ent.WalletHold) ledger.HoldPlaced {
	p := ledger.HoldPlaced{Channel: h.Channel.String(), Session: h.Session, Store: h.StoreCode}
	switch {
	case h.SaleID != nil:
		p.TakenBy = wallethold.ChannelPdv.String()
	case h.OrderID != nil:
		p.TakenBy = wallethold.ChannelEcommerce.String()
	}
	return p
}

// Funds are what a wallet holds and what may be held or spent of it now.
type Funds struct {
	Balance int64 // released, not expired by the upkeep yet
	// Available is the balance less the lots past their expiry the upkeep
	// has not reached and the cents held; nothing while a debt is open.
	Available int64
}

// Available reads the funds of the customer's wallet of unit at now,
// through c, without a lock (an offer's read: a hold checks again under
// the lock). A wallet never moved has none.
func Available(ctx context.Context, c *ent.Client, customerID string, u Unit, now time.Time) (Funds, error) {
	wal, err := c.Wallet.Query().Where(entwallet.CustomerID(customerID), entwallet.KindEQ(entwallet.Kind(u))).Only(ctx)
	if ent.IsNotFound(err) {
		return Funds{}, nil
	}
	if err != nil {
		return Funds{}, err
	}
	n, err := available(ctx, c, wal, now, "")
	return Funds{Balance: wal.BalanceCents, Available: n}, err
}

// available is what a wallet may hold or spend at now, the hold except
// not counted.
func available(ctx context.Context, c *ent.Client, wal *ent.Wallet, now time.Time, except string) (int64, error) {
	if wal.DebtCents > 0 {
		return 0, nil
	}
	overdue, err := c.WalletLot.Query().
		Where(walletlot.CustomerID(wal.CustomerID), walletlot.WalletEQ(walletlot.Wallet(wal.Kind)),
			walletlot.RemainingCentsGT(0), walletlot.PendingUntilIsNil(), walletlot.ExpiresAtLTE(now)).
		Aggregate(sumOf(walletlot.FieldRemainingCents)).Int(ctx)
	if err != nil {
		return 0, err
	}
	cents, err := heldCents(ctx, c, now, except,
		wallethold.CustomerID(wal.CustomerID), wallethold.WalletEQ(wallethold.Wallet(wal.Kind)))
	if err != nil {
		return 0, err
	}
	return max(wal.BalanceCents-int64(overdue)-cents, 0), nil
}

// heldCents is the cents of the holds matching which that count at now (a
// hold taken, or open within its grace), the hold except not counted.
func heldCents(ctx context.Context, c *ent.Client, now time.Time, except string, which ...predicate.WalletHold) (int64, error) {
	held := c.WalletHold.Query().Where(which...).Where(wallethold.Or(
		wallethold.StatusEQ(wallethold.StatusTaken),
		wallethold.And(wallethold.StatusEQ(wallethold.StatusOpen), wallethold.ExpiresAtGT(now.Add(-ledger.HoldGrace)))))
	if except != "" {
		held.Where(wallethold.IDNEQ(except))
	}
	cents, err := held.Aggregate(sumOf(wallethold.FieldCents)).Int(ctx)
	return int64(cents), err
}

// CardAvailable is what a gift card (locked by the caller, spendable) may
// hold or spend at now: its balance less its holds that count, the hold
// except not counted.
func (w Wallets) CardAvailable(ctx context.Context, c *ent.Client, card *ent.GiftCard, except string) (int64, error) {
	held, err := heldCents(ctx, c, w.now(), except, wallethold.GiftCardID(card.ID))
	return max(card.BalanceCents-held, 0), err
}

// sumOf is the sum of a column, 0 over no row.
func sumOf(column string) ent.AggregateFunc {
	return func(s *entsql.Selector) string { return "COALESCE(" + entsql.Sum(s.C(column)) + ", 0)" }
}

// PlaceHold reserves h's cents for ledger.HoldTTL, under the customer's
// lock: ErrDebtOpen while the wallet owes, ErrInsufficient when what is
// available (Funds) is short. The same session asked again answers its
// hold (replayed), unless it holds other cents, another wallet's, channel's
// or customer's (ErrHoldSession).
func (w Wallets) PlaceHold(ctx context.Context, c *ent.Client, h Hold) (hold *ent.WalletHold, replayed bool, err error) {
	if h.Cents <= 0 || h.Unit == GiftCard {
		return nil, false, fmt.Errorf("hold of %d cents of %s", h.Cents, h.Unit)
	}
	cust, wal, err := w.lock(ctx, c, h.CustomerID, h.Unit)
	if err != nil {
		return nil, false, err
	}
	if prior, err := priorHold(ctx, c, h, &cust.ID); prior != nil || err != nil {
		return prior, prior != nil, err
	}
	if wal.DebtCents > 0 {
		return nil, false, ErrDebtOpen
	}
	n, err := available(ctx, c, wal, w.now(), "")
	if err != nil {
		return nil, false, err
	}
	return w.createHold(ctx, c, cust.TenantID, &cust.ID, h, n)
}

// PlaceCardHold is PlaceHold of a gift card's cents (h.Unit GiftCard) for
// domain/giftcard, card locked and spendable: within CardAvailable, and
// the hold names the card's customer, none for a card bound to no one.
func (w Wallets) PlaceCardHold(ctx context.Context, c *ent.Client, card *ent.GiftCard, h Hold) (hold *ent.WalletHold, replayed bool, err error) {
	if h.Cents <= 0 || h.Unit != GiftCard || h.CardID != card.ID {
		return nil, false, fmt.Errorf("hold of %d cents of %s %s", h.Cents, h.Unit, h.CardID)
	}
	if prior, err := priorHold(ctx, c, h, card.CustomerID); prior != nil || err != nil {
		return prior, prior != nil, err
	}
	n, err := w.CardAvailable(ctx, c, card, "")
	if err != nil {
		return nil, false, err
	}
	return w.createHold(ctx, c, card.TenantID, card.CustomerID, h, n)
}

// priorHold is the hold h's session placed already (nil: none), refused
// (ErrHoldSession) when it holds other cents, another wallet's, card's,
// channel's, store's or customer's (customerID).
func priorHold(ctx context.Context, c *ent.Client, h Hold, customerID *string) (*ent.WalletHold, error) {
	prior, err := c.WalletHold.Query().Where(wallethold.Session(h.Session)).Only(ctx)
	switch {
	case ent.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	case deref(prior.CustomerID) != deref(customerID) || prior.Cents != h.Cents || prior.Channel != h.Channel ||
		prior.Wallet != wallethold.Wallet(h.Unit) || deref(prior.GiftCardID) != h.CardID || prior.StoreCode != h.StoreCode:
		return nil, ErrHoldSession
	}
	return prior, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// createHold writes h for ledger.HoldTTL when available covers it
// (ErrInsufficient otherwise).
func (w Wallets) createHold(ctx context.Context, c *ent.Client, tenantID string, customerID *string, h Hold,
	available int64) (*ent.WalletHold, bool, error) {
	if available < h.Cents {
		return nil, false, ErrInsufficient
	}
	now := w.now()
	create := c.WalletHold.Create().SetTenantID(tenantID).SetNillableCustomerID(customerID).SetCreatedAt(now).
		SetWallet(wallethold.Wallet(h.Unit)).SetChannel(h.Channel).SetSession(h.Session).SetStoreCode(h.StoreCode).
		SetCents(h.Cents).SetExpiresAt(now.Add(ledger.HoldTTL))
	if h.CardID != "" {
		create.SetGiftCardID(h.CardID)
	}
	hold, err := create.Save(ctx)
	if ent.IsConstraintError(err) {
		return nil, false, ErrHoldSession // the session taken meanwhile, for another customer
	}
	return hold, false, err
}

// LockHold reads hold id under its customer's lock, for owner
// (ErrHoldForeign when the hold is another's); an unknown id is ent's not
// found.
func (w Wallets) LockHold(ctx context.Context, c *ent.Client, owner ledger.HoldOwner, id string) (*ent.WalletHold, error) {
	hold, _, _, err := w.lockHold(ctx, c, &owner, id)
	return hold, err
}

// LockCardHold reads a gift card's hold id under its card's lock, for
// domain/giftcard's moves of it; answers the card too.
func (w Wallets) LockCardHold(ctx context.Context, c *ent.Client, id string) (*ent.WalletHold, *ent.GiftCard, error) {
	hold, err := c.WalletHold.Get(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	if hold.GiftCardID == nil {
		return nil, nil, ErrHoldUnavailable
	}
	card, err := LockCard(ctx, c, w.Dialect, *hold.GiftCardID)
	if err != nil {
		return nil, nil, err
	}
	hold, err = c.WalletHold.Get(ctx, id) // re-read under the lock
	return hold, card, err
}

// lockHold is LockHold answering the customer and the wallet it locked
// too, for owner unless nil; a gift card's hold locks its card and answers
// neither.
func (w Wallets) lockHold(ctx context.Context, c *ent.Client, owner *ledger.HoldOwner, id string) (*ent.WalletHold, *ent.Customer, *ent.Wallet, error) {
	hold, err := c.WalletHold.Get(ctx, id)
	if err != nil {
		return nil, nil, nil, err
	}
	var cust *ent.Customer
	var wal *ent.Wallet
	if hold.GiftCardID != nil {
		_, err = LockCard(ctx, c, w.Dialect, *hold.GiftCardID)
	} else {
		cust, wal, err = w.lock(ctx, c, deref(hold.CustomerID), Unit(hold.Wallet))
	}
	if err != nil {
		return nil, nil, nil, err
	}
	if hold, err = c.WalletHold.Get(ctx, id); err != nil { // re-read under the lock
		return nil, nil, nil, err
	}
	if owner != nil && !owner.Owns(Placed(hold)) {
		return nil, nil, nil, ErrHoldForeign
	}
	return hold, cust, wal, nil
}

// ReleaseHold gives an open hold of owner's cents back; a hold already
// released answers as it is, one taken or spent ErrHoldUnavailable, one of
// another owner ErrHoldForeign.
func (w Wallets) ReleaseHold(ctx context.Context, c *ent.Client, owner ledger.HoldOwner, id string) (*ent.WalletHold, error) {
	hold, err := w.LockHold(ctx, c, owner, id)
	if ent.IsNotFound(err) {
		return nil, ErrHoldUnavailable
	}
	if err != nil {
		return nil, err
	}
	switch hold.Status {
	case wallethold.StatusReleased:
		return hold, nil
	case wallethold.StatusOpen:
		return hold.Update().SetStatus(wallethold.StatusReleased).SetClosedAt(w.now()).Save(ctx)
	default:
		return nil, ErrHoldUnavailable
	}
}

// ReleaseLapsed marks released the open holds past their grace, as the
// upkeep does; they count for nothing already. It answers how many.
func (w Wallets) ReleaseLapsed(ctx context.Context, c *ent.Client) (int, error) {
	now := w.now()
	return c.WalletHold.Update().
		Where(wallethold.StatusEQ(wallethold.StatusOpen), wallethold.ExpiresAtLTE(now.Add(-ledger.HoldGrace))).
		SetStatus(wallethold.StatusReleased).SetClosedAt(now).Save(ctx)
}

// TakeHold has a sale (saleID) or an order (orderID) of owner take an open
// hold of the customer matched by whose (a gift card's hold: of anyone,
// its code paid), paying cents: from then on it counts until SpendHold
// debits it. ErrHoldForeign when owner does not own it; ErrHoldUnavailable
// when it is unknown, not open, has lapsed, is another customer's, or
// holds other cents.
func (w Wallets) TakeHold(ctx context.Context, c *ent.Client, owner ledger.HoldOwner, id string, cents int64,
	whose predicate.Customer, saleID, orderID *string) error {
	hold, err := c.WalletHold.Get(ctx, id) // where it was placed never changes; the update takes only an open hold
	if ent.IsNotFound(err) {
		return ErrHoldUnavailable
	}
	if err != nil {
		return err
	}
	if !owner.Owns(Placed(hold)) {
		return ErrHoldForeign
	}
	take := c.WalletHold.Update().
		Where(wallethold.ID(id), wallethold.StatusEQ(wallethold.StatusOpen), wallethold.ExpiresAtGT(w.now()),
			wallethold.CentsEQ(cents))
	if hold.GiftCardID == nil {
		take.Where(wallethold.HasCustomerWith(whose))
	}
	n, err := take.
		SetStatus(wallethold.StatusTaken).SetNillableSaleID(saleID).SetNillableOrderID(orderID).Save(ctx)
	if err != nil {
		return err
	}
	if n != 1 {
		return ErrHoldUnavailable
	}
	return nil
}

// paid is the move of a hold a sale or order took: its source is what
// took it.
func paid(h *ent.WalletHold, reason string) Move {
	m := Move{CustomerID: deref(h.CustomerID), Unit: Unit(h.Wallet), StoreCode: h.StoreCode, Reason: reason,
		SourceKind: walletentry.SourceKindOrder, SourceID: h.OrderID}
	if h.SaleID != nil {
		m.SourceKind, m.SourceID = walletentry.SourceKindSale, h.SaleID
	}
	return m
}

// SpendHold debits a taken hold's cents once, for the sale or order that
// took it (the entry's source), under the customer's lock, the lots
// expiring first first, and records cashback.spent. Cents that expired
// while held are not taken twice: the debit is the hold's cents within
// what is available besides the other holds, none while a debt is open
// (the Result's Entry is nil when nothing was debited). A hold spent
// already answers its entry (Replayed); ErrSourceSpent when another hold
// paid its sale or order.
func (w Wallets) SpendHold(ctx context.Context, c *ent.Client, id, reason string) (*Result, error) {
	hold, cust, wal, err := w.lockHold(ctx, c, nil, id)
	if err != nil {
		return nil, err
	}
	if hold.GiftCardID != nil {
		return nil, fmt.Errorf("hold %s is a gift card's: domain/giftcard spends it", id)
	}
	if hold.Status != wallethold.StatusTaken && hold.Status != wallethold.StatusSpent {
		return nil, ErrHoldUnavailable
	}
	m := paid(hold, reason)
	prior, err := findSource(ctx, c, m, walletentry.KindDebit)
	switch {
	case err != nil:
		return nil, err
	case hold.Status == wallethold.StatusSpent:
		return &Result{Entry: prior, Replayed: true}, nil
	case prior != nil:
		return nil, ErrSourceSpent
	}
	now := w.now()
	n, err := available(ctx, c, wal, now, id)
	if err != nil {
		return nil, err
	}
	res := &Result{}
	if m.Cents = min(hold.Cents, n); m.Cents > 0 {
		if res.Entry, err = w.spendLots(ctx, c, cust, wal, m, now); err != nil {
			return nil, err
		}
		data := map[string]any{
			"customer_id": cust.ID, "entry_id": res.Entry.ID, "hold_id": hold.ID, "wallet": string(m.Unit),
			"amount": Reais(m.Cents), "channel": hold.Channel.String(), "store_code": hold.StoreCode,
			"balance_after": Reais(res.Entry.BalanceAfterCents),
		}
		data[string(m.SourceKind)+"_id"] = *m.SourceID
		if err := outbox.Record(ctx, c, now, cust.TenantID, outbox.CashbackSpent, cust.ID, data); err != nil {
			return nil, err
		}
	}
	return res, hold.Update().SetStatus(wallethold.StatusSpent).SetClosedAt(now).Exec(ctx)
}

// RefundHold gives back, once, what a spent hold debited (its sale or
// order rolled back) with Refund, and marks the hold released. A hold
// refunded already answers its refund (Replayed); an open or taken hold is
// ErrHoldUnavailable (release an open one); a hold released unspent
// answers as it is (Replayed, no entry). The Result's Entry is nil when the
// hold had debited nothing.
func (w Wallets) RefundHold(ctx context.Context, c *ent.Client, id, reason string) (*Result, error) {
	hold, _, _, err := w.lockHold(ctx, c, nil, id)
	if err != nil {
		return nil, err
	}
	if hold.GiftCardID != nil {
		return nil, fmt.Errorf("hold %s is a gift card's: domain/giftcard refunds it", id)
	}
	m := paid(hold, reason)
	switch hold.Status {
	case wallethold.StatusReleased: // its refund, if it was spent (a source took it)
		prior, err := findSource(ctx, c, m, walletentry.KindRefund)
		return &Result{Entry: prior, Replayed: true}, err
	case wallethold.StatusOpen, wallethold.StatusTaken:
		return nil, ErrHoldUnavailable
	case wallethold.StatusSpent: // refunded below
	}
	debit, err := findSource(ctx, c, m, walletentry.KindDebit)
	if err != nil {
		return nil, err
	}
	res := &Result{}
	if debit != nil {
		m.Cents = -debit.AmountCents
		if res, err = w.Refund(ctx, c, m); err != nil {
			return nil, err
		}
	}
	return res, hold.Update().SetStatus(wallethold.StatusReleased).SetClosedAt(w.now()).Exec(ctx)
}
