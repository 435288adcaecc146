package pos

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/ledger"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customer"
)

// MethodPoints is the payment method of points spent as money: the payment
// names the hold (holdId) the POS asked for.
const MethodPoints = "POINTS"

// PointsHoldInput asks to reserve the points that pay Amount of the
// identified customer's sale at StoreID.
type PointsHoldInput struct {
	SessionID  string
	Customer   *POSCustomer
	StoreID    string
	Amount     *decimal.Decimal
	SaleAmount *decimal.Decimal // the cart's payable value, for the programme's share; optional
}

// spendingFields are the customer's fields a points offer reads, added to
// fields when the programme takes points at the till.
func spendingFields(t *ent.Tenant, fields ...string) []string {
	if !slices.Contains(t.PointsSpendChannels, loyalty.ChannelPOS) {
		return fields
	}
	return loyalty.OfferFields(fields...)
}

// pointsOffer is what the identified customer (read with spendingFields)
// may pay with points on a cart of total (nil: none); nil when the
// programme takes no points at the till.
func (a *Service) pointsOffer(ctx context.Context, t *ent.Tenant, cust *ent.Customer, total *decimal.Decimal) (*loyalty.PointsOffer, error) {
	if !slices.Contains(t.PointsSpendChannels, loyalty.ChannelPOS) {
		return nil, nil
	}
	return a.Loyalty.Offer(ctx, a.k.DB.Ent, t, cust, loyalty.ChannelPOS, total)
}

// HoldPoints reserves, for ledger.HoldTTL, the points that pay in.Amount of
// the identified customer's sale; the same session asked again answers its
// hold (replayed).
func (a *Service) HoldPoints(ctx context.Context, in PointsHoldInput) (hold *ent.PointsHold, replayed bool, err error) {
	if err := Rules.HoldPoints.Allow(ctx); err != nil {
		return nil, false, err
	}
	if err := kernel.GuardedPOS("", in); err != nil {
		return nil, false, err
	}
	var p apperr.Problems
	if strings.TrimSpace(in.SessionID) == "" {
		p.Add("sessionId", "is required")
	}
	var doc string
	if in.Customer == nil {
		p.Add("customer", "is required")
	} else {
		doc, _ = in.Customer.parse(&p, true, true)
	}
	checkHoldPlace(&p, in.StoreID, in.Amount, in.SaleAmount)
	if err := p.Malformed(); err != nil {
		return nil, false, err
	}
	tenant, err := a.k.TenantSettings(ctx)
	if err != nil {
		return nil, false, err
	}
	cust, err := a.k.DB.Ent.Customer.Query().Where(customers.CustomerWithDocument(doc)).Select(customer.FieldID).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, false, apperr.NotFound("customer")
	}
	if err != nil {
		return nil, false, err
	}
	return a.Loyalty.HoldPoints(ctx, tenant, loyalty.HoldRequest{CustomerID: cust.ID, Channel: loyalty.ChannelPOS,
		Session: loyalty.ChannelPOS + ":" + in.SessionID, StoreCode: in.StoreID, Amount: *in.Amount, Total: in.SaleAmount})
}

// checkHoldPlace checks what every till's hold names: its store, the
// amount it pays and, optionally, the cart's payable value.
func checkHoldPlace(p *apperr.Problems, storeID string, amount, saleAmount *decimal.Decimal) {
	if strings.TrimSpace(storeID) == "" {
		p.Add("store.id", "is required")
	}
	positive(p, "amount", amount)
	if saleAmount != nil && !saleAmount.IsPositive() {
		p.Add("saleAmount", "must be positive")
	}
}

// tillOwner owns the holds of the tills at store ("": any store's).
func tillOwner(store string) ledger.HoldOwner {
	return ledger.HoldOwner{Channel: loyalty.ChannelPOS, Store: store}
}

// ReleasePointsHold gives a till hold's points back before it lapses.
func (a *Service) ReleasePointsHold(ctx context.Context, id string) (*ent.PointsHold, error) {
	if err := Rules.ReleasePointsHold.Allow(ctx); err != nil {
		return nil, err
	}
	if kernel.GuardedPOS("id", id) != nil || !strings.HasPrefix(id, "phd_") {
		return nil, loyalty.HoldUnavailable()
	}
	return a.Loyalty.ReleaseHold(ctx, tillOwner(""), id)
}

// pointsPayment is the one POINTS payment of a sale, nil without one; a
// sale paid with points must name its hold, be an identified customer's,
// carry one such payment, not be finished offline, and keep within the
// programme's share.
func (in SaleInput) pointsPayment(ctx context.Context, c *ent.Client, t *ent.Tenant, doc string) (*SalePaymentInput, error) {
	var found *SalePaymentInput
	for i := range in.Payments {
		pm := &in.Payments[i]
		if !strings.EqualFold(pm.Method, MethodPoints) {
			if pm.HoldID != "" && walletOf(pm.Method) == "" {
				return nil, apperr.Malformed("sale.payments["+strconv.Itoa(i)+"].holdId", "is only for a %s, %s or %s payment",
					MethodPoints, MethodCashback, MethodGiftCard)
			}
			continue
		}
		f := "sale.payments[" + strconv.Itoa(i) + "]"
		switch {
		case in.Offline:
			return nil, &apperr.Error{Kind: apperr.KindUnprocessable, Code: "points_payment_offline", Field: f + ".method",
				Message: "a sale finished offline cannot be paid with points: the points were never held"}
		case pm.HoldID == "":
			return nil, &apperr.Error{Kind: apperr.KindUnprocessable, Code: "points_hold_required", Field: f + ".holdId",
				Message: "a " + MethodPoints + " payment names the hold POST …/points/holds answered"}
		case found != nil:
			return nil, apperr.Invalid(f+".method", "a sale carries at most one %s payment", MethodPoints)
		case doc == DefaultCustomerDocument:
			return nil, apperr.Invalid("customer.id", "an unidentified customer cannot pay with points")
		}
		found = pm
	}
	if found != nil {
		level, err := loyalty.LevelFor(ctx, c, t, customers.CustomerWithDocument(doc))
		if err != nil {
			return nil, err
		}
		if err := loyalty.CheckPointsShare(t, level, *found.Amount, *in.AmountPayable); err != nil {
			return nil, err
		}
	}
	return found, nil
}

// pointsPaid is the R$ a sale (read with its payments) paid with points.
func pointsPaid(s *ent.Sale) decimal.Decimal {
	paid := decimal.Zero
	for _, pm := range s.Edges.Payments {
		if pm.HoldID != nil && strings.EqualFold(pm.Method, MethodPoints) {
			paid = paid.Add(pm.Amount)
		}
	}
	return paid
}

// spendSalePoints debits the hold of a sale's POINTS payment (the sale read
// with its payments and store), once, and answers the points spent.
func (a *Service) spendSalePoints(ctx context.Context, c *ent.Client, s *ent.Sale) (int64, error) {
	for _, pm := range s.Edges.Payments {
		if pm.HoldID == nil || !strings.EqualFold(pm.Method, MethodPoints) {
			continue
		}
		res, err := a.Loyalty.SpendSaleHold(ctx, c, *pm.HoldID, s.ID, "paid sale "+s.ExternalID+" at "+s.Edges.Store.Code)
		if err != nil || res == nil {
			return 0, err
		}
		if !res.Replayed {
			err = outbox.Record(ctx, c, res.Entry.CreatedAt, s.TenantID, outbox.PointsSpent, res.Entry.ID, map[string]any{
				"customer_id": res.Entry.CustomerID, "points": -res.Entry.Points, "amount": pm.Amount.StringFixed(2),
				"sale_id": s.ID, "receipt": s.ExternalID, "store_code": s.Edges.Store.Code, "channel": loyalty.ChannelPOS,
				"balance_after": res.Entry.BalanceAfter,
			})
		}
		return -res.Entry.Points, err
	}
	return 0, nil
}
