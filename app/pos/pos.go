package pos

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/app/loyalty"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/document"
	"github.com/fideliza/fideliza/domain/points"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/sale"
	"github.com/fideliza/fideliza/ent/salereturn"
	"github.com/fideliza/fideliza/ent/store"
)

// DefaultCustomerDocument is the customer id of a sale without an
// identified customer.
const DefaultCustomerDocument = "00000000000"

// The channel point-of-sale campaigns are for.
const channelPOS = "pdv"

// Limits of the point-of-sale documents.
const (
	maxDocumentLength = 18
	maxTypeLength     = 10
	maxPOSItems       = 1000
)

var posPhone = regexp.MustCompile(`^\+?[0-9]{8,15}$`)

// The protocol values of the point-of-sale document: identify and
// authorize take PARTNER (optional), sale registration PARTNER_V1.
const (
	protocolPartner = "PARTNER"
	protocolSale    = "PARTNER_V1"
)

// SaleInput is a sale a till registers: its receipt, customer, lines and
// payments.
type SaleInput struct {
	Protocol                              string
	Customer                              *POSCustomer
	SaleID                                string // digits of the receipt number
	StoreID, PosID, Channel               string
	EmployeeID, SellerID                  string // sale.store.employeeId and sellerId, optional
	Date                                  *time.Time
	Amount, AmountPayable, DiscountAmount *decimal.Decimal
	Items                                 []SaleItemInput
	Payments                              []SalePaymentInput
	FiscalDocument                        json.RawMessage
	CouponCode                            string // the code authorize was given, for its campaign's redemption
	Offline                               bool   // finished without the service answering: no points payment
}

// SaleItemInput is a line of a sale.
type SaleItemInput struct {
	ID, GTIN, Description string
	UnitPrice, Quantity   *decimal.Decimal
	Discounts             []POSDiscount
	GiftCardCode          string // the code of the inactive gift card the line sells (giftcardsales.go)
}

// SalePaymentInput is a payment of a sale.
type SalePaymentInput struct {
	ID               string
	Amount           *decimal.Decimal
	Method, Bin, NSU string
	Installments     *int
	HoldID           string // the hold a POINTS, CASHBACK or GIFT_CARD payment spends
}

func positive(p *apperr.Problems, field string, v *decimal.Decimal) {
	if v == nil || !v.IsPositive() {
		p.Add(field, "is required and must be positive")
	}
}

var digitsOnly = regexp.MustCompile(`^[0-9]{1,19}$`)

// validate checks the document's table of sale fields; doc is the customer's
// sanitized document, DefaultCustomerDocument when unidentified.
// isDefaultCustomer says whether id is DefaultCustomerDocument, bare or
// formatted.
func isDefaultCustomer(id string) bool {
	d, err := document.Unformat(id)
	return err == nil && d == DefaultCustomerDocument
}

func (in SaleInput) validate() (doc string, typ document.Type, err error) {
	var p apperr.Problems
	checkProtocol(&p, in.Protocol, protocolSale, true)
	doc = DefaultCustomerDocument
	if in.Customer != nil && strings.TrimSpace(in.Customer.ID) != "" && !isDefaultCustomer(in.Customer.ID) {
		doc, typ = in.Customer.parse(&p, false, true)
	}
	if !digitsOnly.MatchString(in.SaleID) {
		p.Add("sale.id", "is required: the receipt number (an integer)")
	}
	for field, v := range map[string]string{"sale.store.id": in.StoreID, "sale.store.posId": in.PosID, "sale.channel": in.Channel} {
		if strings.TrimSpace(v) == "" {
			p.Add(field, "is required")
		}
	}
	if in.Date == nil {
		p.Add("sale.date", "is required (ISO 8601)")
	}
	positive(&p, "sale.amount", in.Amount)
	positive(&p, "sale.amountPayable", in.AmountPayable)
	if in.DiscountAmount != nil && in.DiscountAmount.IsNegative() {
		p.Add("sale.discountAmount", "must not be negative")
	}
	if len(in.CouponCode) > 64 {
		p.Add("sale.couponCode", "must be at most 64 characters")
	}
	switch n := len(in.Items); {
	case n == 0:
		p.Add("sale.items", "must hold at least one item")
	case n > maxPOSItems:
		p.Add("sale.items", "must hold at most %d items", maxPOSItems)
	}
	discounted := false
	for i, it := range in.Items {
		f := func(name string) string { return "sale.items[" + strconv.Itoa(i) + "]." + name }
		for name, v := range map[string]string{"id": it.ID, "gtin": it.GTIN, "description": it.Description} {
			if strings.TrimSpace(v) == "" {
				p.Add(f(name), "is required")
			}
		}
		positive(&p, f("unitPrice"), it.UnitPrice)
		positive(&p, f("quantity"), it.Quantity)
		lineDiscount := decimal.Zero
		for j, d := range it.Discounts {
			df := func(name string) string { return f("discounts[" + strconv.Itoa(j) + "]." + name) }
			if d.external() && !d.flaggedExternal() {
				p.Add(df("promotionId"), "is required when a discount is present")
			}
			if d.Quantity == nil || !d.Quantity.IsPositive() {
				p.Add(df("quantity"), "is required and must be positive")
			}
			if d.UnitDiscount == nil || d.UnitDiscount.IsNegative() {
				p.Add(df("unitDiscount"), "is required and must not be negative")
			}
			// A discount never exceeds what it discounts; the sums stored
			// per item and per sale stay within the item's value.
			if d.Quantity != nil && it.Quantity != nil && d.Quantity.GreaterThan(*it.Quantity) {
				p.Add(df("quantity"), "must not exceed the item's quantity")
			}
			if d.UnitDiscount != nil && it.UnitPrice != nil && d.UnitDiscount.GreaterThan(*it.UnitPrice) {
				p.Add(df("unitDiscount"), "must not exceed the item's unitPrice")
			}
			if d.UnitDiscount != nil && d.Quantity != nil {
				lineDiscount = lineDiscount.Add(d.UnitDiscount.Mul(*d.Quantity))
			}
			discounted = true
		}
		if it.UnitPrice != nil && it.Quantity != nil && lineDiscount.GreaterThan(it.UnitPrice.Mul(*it.Quantity)) {
			p.Add(f("discounts"), "must not add up to more than the item's value (unitPrice × quantity)")
		}
	}
	if discounted && doc == DefaultCustomerDocument {
		p.Add("customer.id", "the default customer %s cannot receive discounts", DefaultCustomerDocument)
	}
	if len(in.Payments) == 0 {
		p.Add("sale.payments", "must hold at least one payment")
	}
	for i, pm := range in.Payments {
		f := func(name string) string { return "sale.payments[" + strconv.Itoa(i) + "]." + name }
		if !digitsOnly.MatchString(pm.ID) {
			p.Add(f("id"), "is required (an integer)")
		}
		positive(&p, f("amount"), pm.Amount)
		if strings.TrimSpace(pm.Method) == "" {
			p.Add(f("method"), "is required")
		}
		if pm.Installments != nil && (*pm.Installments < 1 || *pm.Installments > 99) {
			p.Add(f("installments"), "must be between 1 and 99")
		}
	}
	return doc, typ, p.Malformed()
}

// errSaleInconsistent is a sale whose values do not add up: field is
// expected to be want within the tenant's tolerance.
func errSaleInconsistent(field, what string, want, got decimal.Decimal) error {
	return &apperr.Error{Kind: apperr.KindUnprocessable, Code: "sale_value_inconsistency", Field: field,
		Message: what + " add up to " + want.StringFixed(2) + " but " + field + " is " + got.StringFixed(2)}
}

// consistent checks that a sale's values add up within the tenant's
// tolerance: the items to sale.amount; their discounts to
// sale.discountAmount; amount less discount to sale.amountPayable; the
// payments to amountPayable; and that what it earns stays within what one
// credit may give. It returns the sale's discount.
func (in SaleInput) consistent(tenant *ent.Tenant) (decimal.Decimal, error) {
	tolerance := tenant.SaleTolerance
	near := func(a, b decimal.Decimal) bool { return !a.Sub(b).Abs().GreaterThan(tolerance) }
	total, discount := decimal.Zero, decimal.Zero
	for _, it := range in.Items {
		total = total.Add(it.UnitPrice.Mul(*it.Quantity))
		for _, d := range it.Discounts {
			discount = discount.Add(d.UnitDiscount.Mul(*d.Quantity))
		}
	}
	if !near(total, *in.Amount) {
		return decimal.Zero, errSaleInconsistent("sale.amount", "the items", total, *in.Amount)
	}
	if in.DiscountAmount != nil {
		if !near(discount, *in.DiscountAmount) {
			return decimal.Zero, errSaleInconsistent("sale.discountAmount", "the items' discounts", discount, *in.DiscountAmount)
		}
		discount = *in.DiscountAmount
	}
	if payable := in.Amount.Sub(discount); !near(payable, *in.AmountPayable) {
		return decimal.Zero, errSaleInconsistent("sale.amountPayable", "sale.amount less the discounts", payable, *in.AmountPayable)
	}
	if len(in.Payments) > 0 {
		paid := decimal.Zero
		for _, pm := range in.Payments {
			paid = paid.Add(*pm.Amount)
		}
		if !near(paid, *in.AmountPayable) {
			return decimal.Zero, errSaleInconsistent("sale.payments", "the payments", paid, *in.AmountPayable)
		}
	}
	if points.Earned(*in.AmountPayable, tenant.PointsPerReal) > loyalty.MaxPointsPerChange {
		return decimal.Zero, &apperr.Error{Kind: apperr.KindUnprocessable, Code: "sale_value_inconsistency", Field: "sale.amountPayable",
			Message: fmt.Sprintf("sale.amountPayable would earn more than %d points, the most one credit gives", loyalty.MaxPointsPerChange)}
	}
	return discount, nil
}

// RegisterSale stores a sale and its processing job, committed with the
// other sales of the tenant arriving meanwhile (salecommit.go), before it
// answers. A receipt already registered by the store is answered with the
// sale stored the first time.
func (a *Service) RegisterSale(ctx context.Context, in SaleInput) (*ent.Sale, error) {
	if err := Rules.RegisterSale.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.GuardedPOS("", in); err != nil {
		return nil, err
	}
	tenant, err := a.k.TenantSettings(ctx)
	if err != nil {
		return nil, err
	}
	if !tenant.SaleRegistration {
		return nil, &apperr.Error{Kind: apperr.KindUnavailable, Code: "sale_registration_disabled",
			Message: "sale registration is disabled for this tenant"}
	}
	doc, typ, err := in.validate()
	if err != nil {
		return nil, err
	}
	st, err := a.k.DB.Ent.Store.Query().Where(store.Code(in.StoreID)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, &apperr.Error{Kind: apperr.KindNotFound, Code: "not_found", Field: "sale.store.id",
			Message: "no store with code " + in.StoreID}
	}
	if err != nil {
		return nil, err
	}
	discount, err := in.consistent(tenant)
	if err != nil {
		return nil, err
	}
	if _, err := in.pointsPayment(ctx, a.k.DB.Ent, tenant, doc); err != nil {
		return nil, err
	}
	if err := in.walletPayments(tenant, doc); err != nil {
		return nil, err
	}
	giftCards, err := in.giftCards(ctx, a.k.DB.Ent, st.ID)
	if err != nil {
		return nil, err
	}
	done := a.commitSale(&saleWrite{ctx: ctx, in: in, storeID: st.ID, doc: doc, typ: string(typ), discount: discount,
		giftCards: giftCards, done: make(chan saleWritten, 1)})
	if ent.IsConstraintError(done.err) {
		// The same receipt registered by a concurrent request, or else a
		// gift card it sells sold by another.
		s, err := a.k.DB.Ent.Sale.Query().Where(sale.StoreID(st.ID), sale.ExternalID(in.SaleID)).Only(ctx)
		if ent.IsNotFound(err) && len(giftCards) > 0 {
			return nil, errGiftCardSoldMeanwhile
		}
		return s, err
	}
	return done.sale, done.err
}

// SaleOutcome reads a sale by its id (sal_…) or by the store's receipt
// number; a receipt number sent by several stores needs storeCode.
func (a *Service) SaleOutcome(ctx context.Context, ref, storeCode string) (*ent.Sale, error) {
	if err := Rules.SaleOutcome.Allow(ctx); err != nil {
		return nil, err
	}
	if kernel.GuardedPOS("ref", ref, "store_code", storeCode) != nil {
		// No sale or store has an id or code no database can hold, and
		// PostgreSQL would fail the query instead of finding none.
		return nil, &apperr.Error{Kind: apperr.KindNotFound, Code: "not_found", Message: "no such sale"}
	}
	q := a.k.DB.Ent.Sale.Query().WithStore().WithReturns(func(q *ent.SaleReturnQuery) {
		q.Order(ent.Asc(salereturn.FieldCreatedAt), ent.Asc(salereturn.FieldID))
	})
	if strings.HasPrefix(ref, "sal_") {
		q.Where(sale.ID(ref))
	} else {
		q.Where(sale.ExternalID(ref))
	}
	if storeCode != "" {
		q.Where(sale.HasStoreWith(store.Code(storeCode)))
	}
	sales, err := q.Limit(2).All(ctx)
	switch {
	case err != nil:
		return nil, err
	case len(sales) == 0:
		return nil, &apperr.Error{Kind: apperr.KindNotFound, Code: "not_found", Message: "no such sale"}
	case len(sales) > 1:
		return nil, apperr.Malformed("storeId", "the receipt number was sent by several stores: add ?storeId=<store code>")
	}
	return sales[0], nil
}
