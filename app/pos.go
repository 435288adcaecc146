package app

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/app/loyalty"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/document"
	"github.com/fideliza/fideliza/domain/eligibility"
	"github.com/fideliza/fideliza/domain/points"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customer"
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

// checkProtocol refuses a protocol other than the documented one: a client
// speaking another version of the interface would be misread.
func checkProtocol(p *apperr.Problems, got, want string, required bool) {
	switch {
	case got == want, got == "" && !required:
	case got == "":
		p.Add("protocol", "is required: %s", want)
	default:
		p.Add("protocol", "must be %s", want)
	}
}

// POSCustomer is the customer reference of a POS request.
type POSCustomer struct {
	ID, Type, Phone string
}

// parse validates the reference: id (CPF or CNPJ, bare or in its mask, at
// most 18 characters once the spaces around it are trimmed) and type (CPF or
// CNPJ, in any case). A type left out is inferred from the id when
// typeOptional (sales: the document makes it optional there, and a sale
// refused for it would be lost). It returns the sanitized document.
func (c POSCustomer) parse(p *apperr.Problems, idRequired, typeOptional bool) (string, document.Type) {
	id := strings.TrimFunc(c.ID, unicode.IsSpace)
	switch {
	case id == "" && idRequired:
		p.Add("customer.id", "is required")
		return "", ""
	case id == "":
		return "", ""
	case utf8.RuneCountInString(id) > maxDocumentLength:
		p.Add("customer.id", "must be at most %d characters", maxDocumentLength)
	}
	t := document.Type(strings.ToUpper(strings.TrimSpace(c.Type)))
	switch {
	case strings.TrimSpace(c.Type) == "" && typeOptional:
		t, d, err := document.ParseAny(c.ID)
		if err != nil {
			p.Add("customer.id", "is not a valid CPF or CNPJ (%v)", err)
		}
		return d, t
	case c.Type == "":
		p.Add("customer.type", "is required (CPF or CNPJ)")
		return "", ""
	case len(c.Type) > maxTypeLength:
		p.Add("customer.type", "must be at most %d characters", maxTypeLength)
		return "", ""
	case t != document.CPF && t != document.CNPJ:
		p.Add("customer.type", "must be CPF or CNPJ")
		return "", ""
	}
	d, err := document.Parse(t, c.ID)
	if err != nil {
		p.Add("customer.id", "is not a valid %s (%v)", t, err)
	}
	return d, t
}

// IdentifyInput is POST …/customers/identify.
type IdentifyInput struct {
	SessionID, Protocol string
	Customer            *POSCustomer
}

// Identification is the answer of identify.
type Identification struct {
	Document  string
	Type      document.Type
	Customer  *ent.Customer // nil: NOT_FOUND; its identified fields only
	Status    string
	PriceCode int
}

// identified are the fields of a customer an identification answers with
// (POSStatus, PriceCode and the point of sale's customer): a third of its
// columns, read at every till for every customer.
var identified = []string{
	customer.FieldExternalID, customer.FieldName, customer.FieldEmail, customer.FieldPhone,
	customer.FieldBirthDate, customer.FieldLevel,
}

// IdentifyCustomer finds the customer of a CPF or CNPJ; an unknown one is
// NOT_FOUND, or pre-registered when the tenant enables it.
func (a *App) IdentifyCustomer(ctx context.Context, in IdentifyInput) (*Identification, error) {
	if err := kernel.GuardedPOS("", in); err != nil {
		return nil, err
	}
	var p apperr.Problems
	if strings.TrimSpace(in.SessionID) == "" {
		p.Add("sessionId", "is required")
	}
	checkProtocol(&p, in.Protocol, protocolPartner, false)
	var doc string
	var typ document.Type
	if in.Customer == nil {
		p.Add("customer", "is required")
	} else {
		doc, typ = in.Customer.parse(&p, true, false)
		if ph := in.Customer.Phone; ph != "" && !posPhone.MatchString(ph) {
			p.Add("customer.phone", "must be a phone number of 8 to 15 digits")
		}
	}
	if err := p.Malformed(); err != nil {
		return nil, err
	}
	tenant, err := a.TenantSettings(ctx)
	if err != nil {
		return nil, err
	}
	var phone string
	if in.Customer != nil {
		phone = in.Customer.Phone
	}
	cust, err := a.findOrPreRegister(ctx, a.DB.Ent, tenant, doc, string(typ), phone, identified...)
	if ent.IsConstraintError(err) { // pre-registered by a concurrent identify
		cust, err = a.DB.Ent.Customer.Query().Where(customers.CustomerWithDocument(doc)).Select(identified...).Only(ctx)
	}
	if err != nil {
		return nil, err
	}
	if cust == nil {
		return &Identification{Document: doc, Type: typ, Status: "NOT_FOUND"}, nil
	}
	return &Identification{
		Document: doc, Type: typ, Customer: cust, Status: customers.POSStatus(cust),
		PriceCode: PriceCode(tenant, points.Level(cust.Level)),
	}, nil
}

// PriceCode is the tenant's POS price code for a level.
func PriceCode(t *ent.Tenant, l points.Level) int {
	switch l {
	case points.Silver:
		return t.PriceCodeSilver
	case points.Gold:
		return t.PriceCodeGold
	case points.Diamond:
		return t.PriceCodeDiamond
	case points.Bronze:
	}
	return t.PriceCodeBronze
}

// POSDiscount is a discount on a cart item. A discount of the service has a
// PromotionID; an external one (PartnerPromotionID "0") has none and is kept
// as it came. It is also the stored form of a sale item's discounts: the
// JSON names are fixed by tags (the Go names they had when rows were first
// stored), so renaming a field cannot make stored sales unreadable.
type POSDiscount struct {
	PromotionID           *string          `json:"PromotionID"`
	PartnerPromotionID    *string          `json:"PartnerPromotionID"`
	UnitDiscount          *decimal.Decimal `json:"UnitDiscount"`
	UnitPriceWithDiscount *decimal.Decimal `json:"UnitPriceWithDiscount"`
	Quantity              *decimal.Decimal `json:"Quantity"`
}

// flaggedExternal says the point of sale marked the discount as its own
// (partnerPromotionId "0").
func (d POSDiscount) flaggedExternal() bool {
	return d.PartnerPromotionID != nil && *d.PartnerPromotionID == "0"
}

// external says the discount is not the service's: flagged external, or
// without a promotion id. Only the service's discounts are redemptions.
func (d POSDiscount) external() bool { return d.PromotionID == nil || d.flaggedExternal() }

// POSItem is a cart item of authorize.
type POSItem struct {
	ID, GTIN, UnitMeasure string
	UnitPrice, Quantity   *decimal.Decimal
	IgnoreDiscount        bool
	Discounts             []POSDiscount
	Increases             json.RawMessage
}

// AuthorizeInput is POST …/discounts/authorizations.
type AuthorizeInput struct {
	SessionID      string
	Protocol       string
	Customer       *POSCustomer
	StoreID        string
	Date           *time.Time
	IgnoreDiscount bool
	CouponCode     string // unlocks the campaign of the code, when it requires one
	Items          []POSItem
}

// Authorization is the cart with the service's discounts added.
type Authorization struct {
	Document string
	Items    []POSItem
	Applied  int // discounts the service added
}

// AuthorizeDiscounts adds to each item the best discount the customer's pdv
// campaigns give, on the price after external discounts: the one best
// campaign's, or those of the campaigns marked combinable together when
// they give more. It stores nothing.
func (a *App) AuthorizeDiscounts(ctx context.Context, in AuthorizeInput) (*Authorization, error) {
	if err := kernel.GuardedPOS("", in); err != nil {
		return nil, err
	}
	var p apperr.Problems
	if strings.TrimSpace(in.SessionID) == "" {
		p.Add("sessionId", "is required")
	}
	checkProtocol(&p, in.Protocol, protocolPartner, false)
	var doc string
	if in.Customer != nil {
		doc, _ = in.Customer.parse(&p, false, false)
	}
	if strings.TrimSpace(in.StoreID) == "" {
		p.Add("sale.store.id", "is required")
	}
	if in.Date == nil {
		p.Add("sale.date", "is required (ISO 8601 with offset)")
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
	for i, it := range in.Items {
		f := func(name string) string { return "sale.items[" + strconv.Itoa(i) + "]." + name }
		if strings.TrimSpace(it.GTIN) == "" {
			p.Add(f("gtin"), "is required")
		}
		if strings.TrimSpace(it.UnitMeasure) == "" {
			p.Add(f("unitMeasure"), "is required")
		}
		if it.UnitPrice == nil || it.UnitPrice.IsNegative() {
			p.Add(f("unitPrice"), "is required and must not be negative")
		}
		if it.Quantity == nil || !it.Quantity.IsPositive() {
			p.Add(f("quantity"), "is required and must be positive")
		}
	}
	if err := p.Malformed(); err != nil {
		return nil, err
	}
	out := &Authorization{Document: doc, Items: in.Items}
	for i := range out.Items { // external discounts come back with promotionId null
		for j := range out.Items[i].Discounts {
			if d := &out.Items[i].Discounts[j]; d.flaggedExternal() {
				d.PromotionID = nil
			}
		}
	}
	if doc == "" || in.IgnoreDiscount {
		return out, nil
	}
	live, err := a.LiveCampaigns(ctx)
	if err != nil {
		return nil, err
	}
	cust, segments, err := a.customerFor(ctx, customers.CustomerWithDocument(doc), live, customer.FieldName) // POSStatus of a pre-registration
	if ent.IsNotFound(err) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	if customers.POSStatus(cust) == customers.POSStatusPreRegister {
		return out, nil
	}
	var couponCampaign string
	if in.CouponCode != "" {
		code, err := a.Campaigns.CouponOf(ctx, in.CouponCode, cust.ID)
		if err != nil {
			return nil, err
		}
		couponCampaign = code.CampaignID
	}
	tenant, err := a.TenantSettings(ctx)
	if err != nil {
		return nil, err
	}
	var discounts []eligibility.Campaign
	for _, c := range live {
		if c.Type == eligibility.Discount && c.DiscountMode != eligibility.FreeShipping {
			discounts = append(discounts, c)
		}
	}
	used, err := a.customerRedemptions(ctx, cust.ID, discounts)
	if err != nil {
		return nil, err
	}
	// The engine sees each discountable item at its price after external
	// discounts; index maps its items back to the cart.
	var cart eligibility.Cart
	var index []int
	for i, it := range out.Items {
		if it.IgnoreDiscount || hasServiceDiscount(it) {
			continue
		}
		price := *it.UnitPrice
		for _, d := range it.Discounts {
			if d.UnitDiscount != nil {
				price = price.Sub(*d.UnitDiscount)
			}
		}
		if !price.IsPositive() {
			continue
		}
		cart.Items = append(cart.Items, eligibility.Item{GTIN: it.GTIN, SKU: it.GTIN, Quantity: *it.Quantity, UnitPrice: price})
		index = append(index, i)
	}
	if len(cart.Items) == 0 {
		return out, nil
	}
	if err := a.Campaigns.EnrichFromCatalogue(ctx, a.DB.Ent, cart.Items, discounts); err != nil {
		return nil, err
	}
	groups, err := a.StoreGroupsAt(ctx, discounts, in.StoreID)
	if err != nil {
		return nil, err
	}
	zone, err := points.Zone(tenant.TimeZone)
	if err != nil {
		return nil, err
	}
	eligible, _ := eligibility.Evaluate(discounts, cart, eligibility.Context{
		Now: a.Now().UTC(), Channel: channelPOS, Store: in.StoreID, StoreGroups: groups, Zone: zone, Segments: segments,
		CustomerRedemptions: used, PointsPerReal: tenant.PointsPerReal, Coupon: couponCampaign,
	})
	for k, picks := range itemDiscounts(eligible, len(cart.Items)) {
		it := &out.Items[index[k]]
		qty := cart.Items[k].Quantity
		price := cart.Items[k].UnitPrice
		for _, pick := range picks {
			unit := pick.amount.DivRound(qty, 8)
			after := price.Sub(unit)
			if after.IsNegative() {
				unit, after = price, decimal.Zero
			}
			id := pick.campaign
			it.Discounts = append(it.Discounts, POSDiscount{
				PromotionID: &id, UnitDiscount: &unit, UnitPriceWithDiscount: &after, Quantity: &qty,
			})
			out.Applied++
			if price = after; price.IsZero() {
				break
			}
		}
	}
	return out, nil
}

// itemDiscount is a campaign's discount on one cart item.
type itemDiscount struct {
	campaign string
	amount   decimal.Decimal
}

// itemDiscounts chooses the discounts of each of n cart items: the best one
// campaign's, or, when they give more together, every campaign marked
// combinable (the default of campaigns that say nothing is one discount per
// item, as before stacking rules).
func itemDiscounts(eligible []eligibility.Eligible, n int) [][]itemDiscount {
	best := make([]*itemDiscount, n)
	combined := make([][]itemDiscount, n)
	sums := make([]decimal.Decimal, n)
	for _, e := range eligible {
		for _, ib := range e.Benefit.Items {
			if !ib.DiscountAmount.IsPositive() {
				continue
			}
			if b := best[ib.Index]; b == nil || ib.DiscountAmount.GreaterThan(b.amount) {
				best[ib.Index] = &itemDiscount{campaign: e.Campaign.ID, amount: ib.DiscountAmount}
			}
			if e.Campaign.Stacking == eligibility.Combinable {
				combined[ib.Index] = append(combined[ib.Index], itemDiscount{campaign: e.Campaign.ID, amount: ib.DiscountAmount})
				sums[ib.Index] = sums[ib.Index].Add(ib.DiscountAmount)
			}
		}
	}
	picks := make([][]itemDiscount, n)
	for k, b := range best {
		switch {
		case b == nil:
		case len(combined[k]) > 1 && sums[k].GreaterThan(b.amount):
			picks[k] = combined[k]
		default:
			picks[k] = []itemDiscount{*b}
		}
	}
	return picks
}

func hasServiceDiscount(it POSItem) bool {
	for _, d := range it.Discounts {
		if !d.external() {
			return true
		}
	}
	return false
}

// SaleInput is POST …/sales.
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
}

// SaleItemInput is a line of a sale.
type SaleItemInput struct {
	ID, GTIN, Description string
	UnitPrice, Quantity   *decimal.Decimal
	Discounts             []POSDiscount
}

// SalePaymentInput is a payment of a sale.
type SalePaymentInput struct {
	ID               string
	Amount           *decimal.Decimal
	Method, Bin, NSU string
	Installments     *int
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
func (a *App) RegisterSale(ctx context.Context, in SaleInput) (*ent.Sale, error) {
	if err := kernel.GuardedPOS("", in); err != nil {
		return nil, err
	}
	tenant, err := a.TenantSettings(ctx)
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
	st, err := a.DB.Ent.Store.Query().Where(store.Code(in.StoreID)).Only(ctx)
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
	done := a.commitSale(&saleWrite{ctx: ctx, in: in, storeID: st.ID, doc: doc, typ: string(typ), discount: discount,
		done: make(chan saleWritten, 1)})
	if ent.IsConstraintError(done.err) {
		// The same receipt registered by a concurrent request.
		return a.DB.Ent.Sale.Query().Where(sale.StoreID(st.ID), sale.ExternalID(in.SaleID)).Only(ctx)
	}
	return done.sale, done.err
}

// SaleOutcome reads a sale by its id (sal_…) or by the store's receipt
// number; a receipt number sent by several stores needs storeCode.
func (a *App) SaleOutcome(ctx context.Context, ref, storeCode string) (*ent.Sale, error) {
	if kernel.GuardedPOS("ref", ref, "store_code", storeCode) != nil {
		// No sale or store has an id or code no database can hold, and
		// PostgreSQL would fail the query instead of finding none.
		return nil, &apperr.Error{Kind: apperr.KindNotFound, Code: "not_found", Message: "no such sale"}
	}
	q := a.DB.Ent.Sale.Query().WithStore().WithReturns(func(q *ent.SaleReturnQuery) {
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
