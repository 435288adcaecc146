package rest

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/app/pos"
	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/decimaltext"
	"github.com/fideliza/fideliza/domain/points"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/sale"
	"github.com/fideliza/fideliza/ent/salereturn"
)

// mountPOS mounts the tenant point-of-sale interface. Its checks run in the
// order DESIGN.md gives, for every route here: tenant id format (400),
// genuine credentials (401), the path's tenant exists (404), credentials of
// this tenant (401), tenant active (404), then the body.
func (s *server) mountPOS(r chi.Router) {
	r.Use(recoverer(s.log, internalProblem), s.posTenant)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		writeProblem(w, r, http.StatusNotFound, "resource-not-found", "no such path in the point-of-sale interface", nil)
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		allowed := allowedMethods(r)
		w.Header().Set("Allow", strings.Join(allowed, ", ")) // RFC 9110 §15.5.6
		writeProblem(w, r, http.StatusMethodNotAllowed, "method-not-allowed",
			r.Method+" is not allowed here; allowed: "+strings.Join(allowed, ", "), nil)
	})
	for _, rt := range s.posRouteTable() {
		mount(r, rt)
	}
}

// allowedMethods are the methods the router serves at the request's path.
func allowedMethods(r *http.Request) []string {
	routes := chi.RouteContext(r.Context()).Routes
	var allowed []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if routes != nil && routes.Match(chi.NewRouteContext(), m, r.URL.Path) {
			allowed = append(allowed, m)
		}
	}
	return allowed
}

// posTenant authenticates a POS client of the path's tenant. An address
// over its quota of failed authentications is refused 429 before anything
// is checked, right credentials included; an authenticated client's requests
// count against its tenant's quota.
func (s *server) posTenant(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d := s.limits.authFailures(w, r); !d.Allowed {
			refusePOS(w, r, d)
			return
		}
		tenantID := chi.URLParam(r, "tenantId")
		if u, err := uuid.Parse(tenantID); err != nil || u.String() != strings.ToLower(tenantID) {
			writeProblem(w, r, http.StatusBadRequest, "validation-error", "tenantId must be a UUID",
				[]apperr.FieldError{{Field: "tenantId", Message: "must be a UUID"}})
			return
		}
		// Every refusal has the same body: absent, unknown, wrong, revoked
		// and other tenants' credentials are not told apart.
		const refused = "HTTP Basic credentials of a point-of-sale client of this tenant are required; those sent, if any, are invalid"
		id, secret, ok := r.BasicAuth()
		if !ok {
			s.limits.authFailed(w, r)
			writeProblem(w, r, http.StatusUnauthorized, "unauthorized", refused, nil)
			return
		}
		v, err := s.app.Auth.AuthenticatePOS(r.Context(), strings.ToLower(tenantID), id, secret)
		switch {
		case errors.Is(err, auth.ErrPOSUnauthorized):
			s.limits.authFailed(w, r)
			writeProblem(w, r, http.StatusUnauthorized, "unauthorized", refused, nil)
			return
		case errors.Is(err, auth.ErrTenantNotFound):
			writeProblem(w, r, http.StatusNotFound, "tenant-not-found", "the tenant does not exist or is inactive", nil)
			return
		case err != nil:
			s.log.ErrorContext(r.Context(), "pos authentication", "request_id", RequestID(r.Context()), "error", err)
			writeProblem(w, r, http.StatusServiceUnavailable, "service-unavailable", "the tenant's data is unavailable; retry later", nil)
			return
		}
		if d := s.limits.client(w, v); !d.Allowed {
			refusePOS(w, withViewer(r, v), d)
			return
		}
		next.ServeHTTP(w, withViewer(r, v))
	})
}

type posCustomerJSON struct {
	ID    *string `json:"id"`
	Type  *string `json:"type"`
	Phone *string `json:"phone"`
}

func (c *posCustomerJSON) input() *pos.POSCustomer {
	if c == nil {
		return nil
	}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	return &pos.POSCustomer{ID: str(c.ID), Type: str(c.Type), Phone: str(c.Phone)}
}

type storeJSON struct {
	ID         string `json:"id,omitempty"`
	PosID      string `json:"posId,omitempty"`
	EmployeeID string `json:"employeeId,omitempty"`
	SellerID   string `json:"sellerId,omitempty"`
}

type messageJSON struct {
	Type    string `json:"type"`
	Content string `json:"content"`
}

// readIdentify reads POST …/customers/identify.
func readIdentify(b *binder) pos.IdentifyInput {
	body := jsonBody[struct {
		SessionID string           `json:"sessionId"`
		Protocol  string           `json:"protocol"`
		Customer  *posCustomerJSON `json:"customer"`
		Store     *storeJSON       `json:"store"`
	}](b)
	return pos.IdentifyInput{SessionID: body.SessionID, Protocol: body.Protocol, Customer: body.Customer.input()}
}

func renderIdentification(in pos.IdentifyInput, res *pos.Identification) identificationJSON {
	c := identifiedJSON{ID: res.Document, Status: res.Status, Type: string(res.Type)}
	if cu := res.Customer; cu != nil {
		first, last, _ := strings.Cut(strings.TrimSpace(cu.Name), " ")
		c.ExternalCode, c.FirstName, c.LastName = cu.ExternalID, nonEmptyString(first), nonEmptyString(strings.TrimSpace(last))
		c.Phone, c.Email = cu.Phone, cu.Email
		// The point of sale's code of a level: 1 (bronze) to 4 (diamond), 0 for none.
		c.Classification = &classificationJSON{Code: points.Rank(points.Level(cu.Level)) + 1, Description: string(cu.Level)}
	}
	out := identificationJSON{Customer: c, Points: renderOffer(res.Points), PriceCode: res.PriceCode, SessionID: in.SessionID}
	out.Cashback, out.GiftCards = renderWalletsOffer(res.Wallets)
	return out
}

// identificationJSON is the answer of identify. Its fields, and those of the
// types it holds, are in the order of their names, as a map's keys would be
// written: typed, it costs no sorting of keys, and its bytes stay what they
// were.
type identificationJSON struct {
	Cashback  *cashbackOfferJSON `json:"cashback,omitempty"`
	Customer  identifiedJSON     `json:"customer"`
	GiftCards []cardOfferJSON    `json:"giftCards,omitempty"`
	Points    *pointsOfferJSON   `json:"points,omitempty"`
	PriceCode int                `json:"priceCode"`
	SessionID string             `json:"sessionId"`
}

type identifiedJSON struct {
	Classification *classificationJSON `json:"classification,omitempty"`
	Email          *string             `json:"email,omitempty"`
	ExternalCode   *string             `json:"externalCode,omitempty"`
	FirstName      *string             `json:"firstName,omitempty"`
	ID             string              `json:"id"`
	LastName       *string             `json:"lastName,omitempty"`
	Phone          *string             `json:"phone,omitempty"`
	Status         string              `json:"status"`
	Type           string              `json:"type"`
}

type classificationJSON struct {
	Code        int    `json:"code"`
	Description string `json:"description"`
}

type posDiscountJSON struct {
	PromotionID           *string     `json:"promotionId"`
	PartnerPromotionID    *string     `json:"partnerPromotionId,omitempty"`
	UnitDiscount          *jsonNumber `json:"unitDiscount,omitempty"`
	UnitPriceWithDiscount *jsonNumber `json:"unitPriceWithDiscount,omitempty"`
	Quantity              *jsonNumber `json:"quantity,omitempty"`
}

type posItemJSON struct {
	ID             string            `json:"id,omitempty"`
	GTIN           string            `json:"gtin"`
	Description    string            `json:"description,omitempty"`
	UnitPrice      *jsonNumber       `json:"unitPrice"`
	UnitMeasure    string            `json:"unitMeasure,omitempty"`
	Quantity       *jsonNumber       `json:"quantity"`
	IgnoreDiscount bool              `json:"ignoreDiscount"`
	Discounts      []posDiscountJSON `json:"discounts"`
	Increases      json.RawMessage   `json:"increases,omitempty"`
	GiftCard       *posGiftCardJSON  `json:"giftCard,omitempty"`
}

// posGiftCardJSON is the inactive gift card a sale line sells.
type posGiftCardJSON struct {
	Code string `json:"code"`
}

// code is the gift card's code, empty for a line of goods.
func (g *posGiftCardJSON) code() string {
	if g == nil {
		return ""
	}
	return g.Code
}

func discountsIn(p *apperr.Problems, field string, ds []posDiscountJSON) []pos.POSDiscount {
	out := make([]pos.POSDiscount, len(ds))
	for i, d := range ds {
		out[i] = pos.POSDiscount{
			PromotionID: d.PromotionID, PartnerPromotionID: d.PartnerPromotionID,
			UnitDiscount:          number(p, field+".unitDiscount", d.UnitDiscount),
			UnitPriceWithDiscount: number(p, field+".unitPriceWithDiscount", d.UnitPriceWithDiscount),
			Quantity:              number(p, field+".quantity", d.Quantity),
		}
	}
	return out
}

// posNumber renders a decimal with at most 8 places.
func posNumber(d *decimal.Decimal) *jsonNumber {
	if d == nil {
		return nil
	}
	n := jsonNumber(decimaltext.Rounded(*d, 8))
	return &n
}

// authorizeRequest is POST …/discounts/authorizations (and …/authorize):
// the operation's input, and the sale its answer echoes.
type authorizeRequest struct {
	in   pos.AuthorizeInput
	sale authorizeSaleJSON
}

type authorizeSaleJSON struct {
	ID             string        `json:"id"`
	Store          storeJSON     `json:"store"`
	Date           string        `json:"date"`
	Amount         *jsonNumber   `json:"amount"`
	IgnoreDiscount bool          `json:"ignoreDiscount"`
	CouponCode     string        `json:"couponCode"`
	Items          []posItemJSON `json:"items"`
}

func (q authorizeRequest) input() pos.AuthorizeInput { return q.in }

func readAuthorize(b *binder) authorizeRequest {
	body := jsonBody[struct {
		SessionID string             `json:"sessionId"`
		Protocol  string             `json:"protocol"`
		Customer  *posCustomerJSON   `json:"customer"`
		Sale      *authorizeSaleJSON `json:"sale"`
	}](b)
	p := &b.problems
	if body.Sale == nil {
		p.Add("sale", "is required")
		return authorizeRequest{}
	}
	sl := body.Sale
	in := pos.AuthorizeInput{SessionID: body.SessionID, Protocol: body.Protocol, Customer: body.Customer.input(), StoreID: sl.Store.ID,
		IgnoreDiscount: sl.IgnoreDiscount, Date: instant(p, "sale.date", sl.Date, dateTime), CouponCode: sl.CouponCode}
	number(p, "sale.amount", sl.Amount)
	for i, it := range sl.Items {
		f := "sale.items[" + strconv.Itoa(i) + "]"
		in.Items = append(in.Items, pos.POSItem{
			ID: it.ID, GTIN: it.GTIN, UnitMeasure: it.UnitMeasure, IgnoreDiscount: it.IgnoreDiscount, GiftCard: it.GiftCard != nil,
			UnitPrice: number(p, f+".unitPrice", it.UnitPrice), Quantity: number(p, f+".quantity", it.Quantity),
			Discounts: discountsIn(p, f+".discounts", it.Discounts), Increases: it.Increases,
		})
	}
	return authorizeRequest{in: in, sale: *sl}
}

func (q authorizeRequest) answer(res *pos.Authorization) authorizationJSON {
	items := make([]posItemJSON, len(res.Items))
	for i, it := range res.Items {
		items[i] = posItemJSON{ID: it.ID, GTIN: it.GTIN, UnitPrice: posNumber(it.UnitPrice), UnitMeasure: it.UnitMeasure,
			Quantity: posNumber(it.Quantity), IgnoreDiscount: it.IgnoreDiscount, Discounts: []posDiscountJSON{}, Increases: it.Increases}
		for _, d := range it.Discounts {
			items[i].Discounts = append(items[i].Discounts, posDiscountJSON{
				PromotionID: d.PromotionID, PartnerPromotionID: d.PartnerPromotionID,
				UnitDiscount: posNumber(d.UnitDiscount), UnitPriceWithDiscount: posNumber(d.UnitPriceWithDiscount),
				Quantity: posNumber(d.Quantity),
			})
		}
	}
	out := authorizationJSON{SessionID: q.in.SessionID, Messages: []messageJSON{
		{Type: "SUCCESS", Content: strconv.Itoa(res.Applied) + " discount(s) authorized"},
	}, Sale: authorizedSaleJSON{
		Amount: q.sale.Amount, Date: q.sale.Date, Items: items, Store: q.sale.Store, TicketID: q.sale.ID,
	}}
	if res.Applied == 0 {
		out.Messages[0] = messageJSON{Type: "INFO", Content: "no offers for this customer and cart"}
	}
	if res.Document != "" {
		out.Customer = &posCustomerIDJSON{ID: res.Document}
	}
	out.Points = renderOffer(res.Points)
	out.Cashback, out.GiftCards = renderWalletsOffer(res.Wallets)
	return out
}

// authorizationJSON is the answer of authorize. Its fields are in the order
// of their names, as a map's keys would be written: typed, the answer costs
// no sorting of keys on each request, and its bytes stay what they were.
type authorizationJSON struct {
	Cashback  *cashbackOfferJSON `json:"cashback,omitempty"`
	Customer  *posCustomerIDJSON `json:"customer,omitempty"`
	GiftCards []cardOfferJSON    `json:"giftCards,omitempty"`
	Messages  []messageJSON      `json:"messages"`
	Points    *pointsOfferJSON   `json:"points,omitempty"`
	Sale      authorizedSaleJSON `json:"sale"`
	SessionID string             `json:"sessionId"`
}

type posCustomerIDJSON struct {
	ID string `json:"id"`
}

type authorizedSaleJSON struct {
	Amount   *jsonNumber   `json:"amount,omitempty"`
	Date     string        `json:"date"`
	Items    []posItemJSON `json:"items"`
	Store    storeJSON     `json:"store"`
	TicketID string        `json:"ticketId,omitempty"`
}

// fiscalDocumentJSON is the optional fiscal document of a sale: the
// document gives its fields, all strings.
type fiscalDocumentJSON struct {
	Number       string `json:"number,omitempty"`
	SerialNumber string `json:"serialNumber,omitempty"`
	Model        string `json:"model,omitempty"`
	Type         string `json:"type,omitempty"`
	URL          string `json:"url,omitempty"`
}

// saleRequest is POST …/sales: 202 once the sale and its processing job
// are committed. The answer echoes the sale's id as sent.
type saleRequest struct {
	in     pos.SaleInput
	saleID *jsonNumber
}

func (q saleRequest) input() pos.SaleInput { return q.in }

func readSale(b *binder) saleRequest {
	body := jsonBody[struct {
		Protocol string           `json:"protocol"`
		Customer *posCustomerJSON `json:"customer"`
		Sale     *struct {
			ID             *jsonNumber   `json:"id"`
			Store          storeJSON     `json:"store"`
			Channel        string        `json:"channel"`
			Date           string        `json:"date"`
			Amount         *jsonNumber   `json:"amount"`
			AmountPayable  *jsonNumber   `json:"amountPayable"`
			DiscountAmount *jsonNumber   `json:"discountAmount"`
			Items          []posItemJSON `json:"items"`
			Payments       []struct {
				ID           *jsonNumber `json:"id"`
				Amount       *jsonNumber `json:"amount"`
				Method       string      `json:"method"`
				Bin          string      `json:"bin"`
				NSU          string      `json:"nsu"`
				Installments *int        `json:"installments"`
				HoldID       string      `json:"holdId"`
			} `json:"payments"`
			Offline        bool                `json:"offline"`
			FiscalDocument *fiscalDocumentJSON `json:"fiscalDocument"`
			CouponCode     string              `json:"couponCode"`
		} `json:"sale"`
	}](b)
	p := &b.problems
	if body.Sale == nil {
		p.Add("sale", "is required")
		return saleRequest{}
	}
	sl := body.Sale
	in := pos.SaleInput{
		Protocol: body.Protocol, Customer: body.Customer.input(), StoreID: sl.Store.ID, PosID: sl.Store.PosID,
		EmployeeID: sl.Store.EmployeeID, SellerID: sl.Store.SellerID, Channel: sl.Channel, Date: instant(p, "sale.date", sl.Date, dateTime),
		Amount: number(p, "sale.amount", sl.Amount), AmountPayable: number(p, "sale.amountPayable", sl.AmountPayable),
		DiscountAmount: number(p, "sale.discountAmount", sl.DiscountAmount), CouponCode: sl.CouponCode, Offline: sl.Offline,
	}
	if sl.ID != nil {
		in.SaleID = string(*sl.ID)
	}
	if sl.FiscalDocument != nil {
		// Stored as the documented fields, re-encoded: the raw JSON could
		// hold what jsonb refuses (lone surrogates, numbers beyond numeric).
		fd, err := json.Marshal(sl.FiscalDocument)
		b.refuse(err)
		in.FiscalDocument = fd
	}
	for i, it := range sl.Items {
		f := "sale.items[" + strconv.Itoa(i) + "]"
		if it.GiftCard != nil && it.GiftCard.Code == "" {
			p.Add(f+".giftCard.code", "is required: the code of the inactive card the line sells")
		}
		in.Items = append(in.Items, pos.SaleItemInput{
			ID: it.ID, GTIN: it.GTIN, Description: it.Description,
			UnitPrice: number(p, f+".unitPrice", it.UnitPrice), Quantity: number(p, f+".quantity", it.Quantity),
			Discounts: discountsIn(p, f+".discounts", it.Discounts), GiftCardCode: it.GiftCard.code(),
		})
	}
	for i, pm := range sl.Payments {
		f := "sale.payments[" + strconv.Itoa(i) + "]"
		pay := pos.SalePaymentInput{Amount: number(p, f+".amount", pm.Amount), Method: pm.Method, Bin: pm.Bin,
			NSU: pm.NSU, Installments: pm.Installments, HoldID: pm.HoldID}
		if pm.ID != nil {
			pay.ID = string(*pm.ID)
		}
		in.Payments = append(in.Payments, pay)
	}
	return saleRequest{in: in, saleID: sl.ID}
}

// saleReceivedJSON is the 202 of a sale registered. Its fields, and those
// of the types it holds, are in the order of their names.
type saleReceivedJSON struct {
	Customer saleCustomerJSON `json:"customer"`
	Messages []messageJSON    `json:"messages"`
	Sale     saleStatusJSON   `json:"sale"`
}

type saleCustomerJSON struct {
	ID   string                     `json:"id"`
	Type *sale.CustomerDocumentType `json:"type"` // null: not identified
}

type saleStatusJSON struct {
	ID     *jsonNumber `json:"id"`
	Status string      `json:"status"`
}

func (q saleRequest) answer(stored *ent.Sale) saleReceivedJSON {
	return saleReceivedJSON{
		Customer: saleCustomerJSON{ID: stored.CustomerDocument, Type: stored.CustomerDocumentType},
		Messages: []messageJSON{{Type: "SUCCESS", Content: "sale received for processing"}},
		Sale:     saleStatusJSON{ID: q.saleID, Status: "RECEIVED"},
	}
}

// saleReturnJSON is the body of a return or cancellation: its id, store,
// date, reason and, for a return, the sale's items and how many of each.
type saleReturnJSON struct {
	ID     string    `json:"id"`
	Store  storeJSON `json:"store"`
	Date   string    `json:"date"`
	Reason string    `json:"reason"`
	Items  []struct {
		ID       string      `json:"id"`
		Quantity *jsonNumber `json:"quantity"`
	} `json:"items"`
}

// readCancellation reads POST …/sales/{saleId}/cancellation: every unit
// not yet returned comes back; 202 once stored with its processing job.
func readCancellation(b *binder) pos.SaleReturnInput {
	body := jsonBody[struct {
		Protocol     string          `json:"protocol"`
		Cancellation *saleReturnJSON `json:"cancellation"`
	}](b)
	return readSaleReturn(b, salereturn.KindCancellation, body.Protocol, body.Cancellation)
}

// readReturn reads POST …/sales/{saleId}/returns: the units listed come
// back; 202 once stored with its processing job.
func readReturn(b *binder) pos.SaleReturnInput {
	body := jsonBody[struct {
		Protocol string          `json:"protocol"`
		Return   *saleReturnJSON `json:"return"`
	}](b)
	return readSaleReturn(b, salereturn.KindReturn, body.Protocol, body.Return)
}

func readSaleReturn(b *binder, kind salereturn.Kind, protocol string, body *saleReturnJSON) pos.SaleReturnInput {
	p := &b.problems
	if body == nil {
		p.Add(string(kind), "is required")
		return pos.SaleReturnInput{}
	}
	in := pos.SaleReturnInput{
		Protocol: protocol, SaleRef: b.path("saleId"), Kind: kind, ID: body.ID,
		StoreID: body.Store.ID, PosID: body.Store.PosID, Reason: body.Reason,
		Date: instant(p, string(kind)+".date", body.Date, dateTime), ItemsWereListed: body.Items != nil,
	}
	for i, it := range body.Items {
		in.Items = append(in.Items, pos.ReturnItemInput{ID: it.ID,
			Quantity: number(p, string(kind)+".items["+strconv.Itoa(i)+"].quantity", it.Quantity)})
	}
	return in
}

// returnReceivedJSON is the 202 of a return or cancellation, under its
// kind's name. Its fields are in the order of their names.
type returnReceivedJSON struct {
	Cancellation *returnJSON   `json:"cancellation,omitempty"`
	Messages     []messageJSON `json:"messages"`
	Return       *returnJSON   `json:"return,omitempty"`
}

func renderReturnReceived(ret *ent.SaleReturn) returnReceivedJSON {
	out := returnReceivedJSON{Messages: []messageJSON{{Type: "SUCCESS", Content: string(ret.Kind) + " received for processing"}}}
	r := renderReturn(ret)
	if ret.Kind == salereturn.KindCancellation {
		out.Cancellation = &r
	} else {
		out.Return = &r
	}
	return out
}

// returnJSON is a return or cancellation as the POS sees it. Its fields are
// in the order of their names.
type returnJSON struct {
	Amount         json.Number       `json:"amount"`
	ID             string            `json:"id"`
	Kind           salereturn.Kind   `json:"kind"`
	PointsReversed int64             `json:"pointsReversed"`
	ProcessedAt    *string           `json:"processedAt,omitempty"`
	ReceivedAt     string            `json:"receivedAt"`
	ReturnID       string            `json:"returnId"`
	Status         salereturn.Status `json:"status"`
}

func renderReturn(ret *ent.SaleReturn) returnJSON {
	return returnJSON{
		ID: ret.ExternalID, ReturnID: ret.ID, Kind: ret.Kind, Status: ret.Status, Amount: json.Number(ret.Amount.String()),
		PointsReversed: ret.PointsReversed, ReceivedAt: timestamp(ret.CreatedAt), ProcessedAt: optTimestamp(ret.ProcessedAt),
	}
}

// readSaleRef reads GET …/sales/{saleId}: the outcome of processing of the
// sale, at the store of ?storeId.
func readSaleRef(b *binder) onPath[string] {
	return onPath[string]{id: b.path("saleId"), in: b.query("storeId")}
}

// saleOutcomeJSON is a sale's outcome. Its fields are in the order of
// their names.
type saleOutcomeJSON struct {
	Sale saleJSON `json:"sale"`
}

type saleJSON struct {
	AmountPayable  json.Number   `json:"amountPayable"`
	ID             string        `json:"id"`
	PointsCredited int64         `json:"pointsCredited"`
	PointsReversed int64         `json:"pointsReversed"`
	ProcessedAt    *string       `json:"processedAt,omitempty"`
	Reason         *string       `json:"reason,omitempty"`
	ReceivedAt     string        `json:"receivedAt"`
	ReturnedAmount json.Number   `json:"returnedAmount"`
	Returns        []returnJSON  `json:"returns"`
	SaleID         string        `json:"saleId"`
	Status         sale.Status   `json:"status"`
	Store          *posStoreJSON `json:"store,omitempty"`
}

type posStoreJSON struct {
	ID string `json:"id"`
}

func renderSale(sl *ent.Sale) saleOutcomeJSON {
	out := saleJSON{
		ID: sl.ExternalID, SaleID: sl.ID, Status: sl.Status, ReceivedAt: timestamp(sl.CreatedAt),
		PointsCredited: sl.PointsCredited, AmountPayable: json.Number(sl.AmountPayable.String()),
		Reason: sl.FailureReason, ProcessedAt: optTimestamp(sl.ProcessedAt), PointsReversed: sl.PointsReversed,
		ReturnedAmount: json.Number(sl.ReturnedAmount.String()), Returns: make([]returnJSON, len(sl.Edges.Returns)),
	}
	if sl.Edges.Store != nil {
		out.Store = &posStoreJSON{ID: sl.Edges.Store.Code}
	}
	for i, ret := range sl.Edges.Returns {
		out.Returns[i] = renderReturn(ret)
	}
	return saleOutcomeJSON{Sale: out}
}
