package pos

import (
	"context"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/giftcards"
	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/app/wallets"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/wallet"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/wallethold"
)

// The payment methods of the money wallets: each payment names the hold
// (holdId) HoldWallet placed.
const (
	MethodCashback = "CASHBACK"
	MethodGiftCard = "GIFT_CARD"
)

// walletOf is the wallet a payment method pays from; "" for a method of
// no wallet.
func walletOf(method string) wallet.Unit {
	switch strings.ToUpper(method) {
	case MethodCashback:
		return wallet.Cashback
	case MethodGiftCard:
		return wallet.GiftCard
	}
	return ""
}

// WalletHoldInput asks to reserve the cashback, or the balance of the gift
// card of GiftCardCode, that pays Amount of a sale at StoreID.
type WalletHoldInput struct {
	SessionID    string
	Customer     *POSCustomer // required for cashback; for a gift card, the customer paying if identified
	StoreID      string
	Wallet       string // CASHBACK or GIFT_CARD
	GiftCardCode string
	Amount       *decimal.Decimal
	SaleAmount   *decimal.Decimal // the cart's payable value, for the programme's share of cashback; optional
}

// HoldWallet reserves, for ledger.HoldTTL, the cashback of the identified
// customer or the gift card's balance that pays in.Amount of a sale; the
// same session asked again answers its hold (replayed). A card's code is
// looked up under the client's quota of guesses.
func (a *Service) HoldWallet(ctx context.Context, in WalletHoldInput) (hold *ent.WalletHold, replayed bool, err error) {
	if err := Rules.HoldWallet.Allow(ctx); err != nil {
		return nil, false, err
	}
	if err := kernel.GuardedPOS("", in); err != nil {
		return nil, false, err
	}
	var p apperr.Problems
	if strings.TrimSpace(in.SessionID) == "" || len(in.SessionID) > 64 {
		p.Add("sessionId", "is required, at most 64 characters")
	}
	u := walletOf(in.Wallet)
	switch {
	case u == "":
		p.Add("wallet", "must be %s or %s", MethodCashback, MethodGiftCard)
	case u == wallet.GiftCard && strings.TrimSpace(in.GiftCardCode) == "":
		p.Add("giftCardCode", "is required for a %s hold", MethodGiftCard)
	case u == wallet.Cashback && in.GiftCardCode != "":
		p.Add("giftCardCode", "is only for a %s hold", MethodGiftCard)
	}
	var doc string
	switch {
	case in.Customer != nil:
		doc, _ = in.Customer.parse(&p, u == wallet.Cashback, true)
	case u == wallet.Cashback:
		p.Add("customer", "is required")
	}
	checkHoldPlace(&p, in.StoreID, in.Amount, in.SaleAmount)
	if err := p.Malformed(); err != nil {
		return nil, false, err
	}
	var customerID string
	if doc != "" && !isDefaultCustomer(doc) {
		cust, err := a.k.DB.Ent.Customer.Query().Where(customers.CustomerWithDocument(doc)).Select(customer.FieldID).Only(ctx)
		switch {
		case ent.IsNotFound(err) && u == wallet.Cashback:
			return nil, false, apperr.NotFound("customer")
		case err == nil:
			customerID = cust.ID
		case !ent.IsNotFound(err):
			return nil, false, err
		}
	}
	session := loyalty.ChannelPOS + ":" + string(u) + ":" + in.SessionID
	if u == wallet.GiftCard {
		if !in.Amount.Equal(in.Amount.Truncate(2)) {
			return nil, false, apperr.Malformed("amount", "must be in whole cents")
		}
		return a.GiftCards.PlaceCardHold(ctx, giftcards.CardHoldRequest{Code: in.GiftCardCode, Hold: wallet.Hold{
			CustomerID: customerID, Channel: wallethold.ChannelPdv, Session: session, StoreCode: in.StoreID,
			Cents: wallet.Cents(*in.Amount)}})
	}
	if customerID == "" {
		return nil, false, apperr.Invalid("customer.id", "an unidentified customer cannot pay with cashback")
	}
	tenant, err := a.k.TenantSettings(ctx)
	if err != nil {
		return nil, false, err
	}
	return a.Wallets.PlaceCashbackHold(ctx, tenant, wallets.HoldRequest{CustomerID: customerID,
		Channel: wallethold.ChannelPdv.String(), Session: session, StoreCode: in.StoreID, Amount: *in.Amount, Total: in.SaleAmount})
}

// ReleaseWalletHold gives a till's wallet hold back before it lapses.
func (a *Service) ReleaseWalletHold(ctx context.Context, id string) (*ent.WalletHold, error) {
	if err := Rules.ReleaseWalletHold.Allow(ctx); err != nil {
		return nil, err
	}
	if kernel.GuardedPOS("id", id) != nil || !strings.HasPrefix(id, "whd_") {
		return nil, wallets.HoldUnavailable()
	}
	return a.Wallets.ReleaseTillHold(ctx, tillOwner(""), id)
}

// walletPayments checks a sale's CASHBACK and GIFT_CARD payments: each
// names its hold, the sale is not finished offline, cashback is paid by an
// identified customer, once, within the programme's share.
func (in SaleInput) walletPayments(t *ent.Tenant, doc string) error {
	cashback := false
	for i := range in.Payments {
		pm := &in.Payments[i]
		u := walletOf(pm.Method)
		if u == "" {
			continue
		}
		f := "sale.payments[" + strconv.Itoa(i) + "]"
		switch {
		case in.Offline:
			return &apperr.Error{Kind: apperr.KindUnprocessable, Code: "wallet_payment_offline", Field: f + ".method",
				Message: "a sale finished offline cannot be paid with cashback or a gift card: nothing was held"}
		case pm.HoldID == "":
			return &apperr.Error{Kind: apperr.KindUnprocessable, Code: "wallet_hold_required", Field: f + ".holdId",
				Message: "a " + strings.ToUpper(pm.Method) + " payment names the hold POST …/wallets/holds answered"}
		case u == wallet.GiftCard:
			continue
		case cashback:
			return apperr.Invalid(f+".method", "a sale carries at most one %s payment", MethodCashback)
		case doc == DefaultCustomerDocument:
			return apperr.Invalid("customer.id", "an unidentified customer cannot pay with cashback")
		}
		cashback = true
		if err := wallets.CheckCashbackShare(t, *pm.Amount, *in.AmountPayable); err != nil {
			return err
		}
	}
	return nil
}

// spendSaleWallets debits the holds of a sale's CASHBACK and GIFT_CARD
// payments (the sale read with its payments and store), each once: a
// replayed job finds them spent.
func (a *Service) spendSaleWallets(ctx context.Context, c *ent.Client, s *ent.Sale) error {
	for _, pm := range s.Edges.Payments {
		if pm.HoldID == nil || walletOf(pm.Method) == "" {
			continue
		}
		if _, err := a.Wallets.SpendSaleHold(ctx, c, *pm.HoldID, "paid sale "+s.ExternalID+" at "+s.Edges.Store.Code); err != nil {
			return err
		}
	}
	return nil
}

// takeSaleHold has the sale saleID of w take the hold its payment pm
// names, in the registration's transaction c: a POINTS payment's points
// hold, a CASHBACK or GIFT_CARD payment's wallet hold.
func (a *Service) takeSaleHold(ctx context.Context, c *ent.Client, w *saleWrite, pm SalePaymentInput, saleID string) error {
	whose := customers.CustomerWithDocument(w.doc)
	if u := walletOf(pm.Method); u != "" {
		return a.Wallets.TakeSaleHold(ctx, c, tillOwner(w.in.StoreID), u, pm.HoldID, wallet.Cents(*pm.Amount), whose, saleID)
	}
	return a.Loyalty.TakeHoldForSale(ctx, c, tillOwner(w.in.StoreID), pm.HoldID, *pm.Amount, whose, saleID)
}
