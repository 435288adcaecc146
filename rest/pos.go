package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/decimaltext"
	"github.com/fideliza/fideliza/domain/guard"
	"github.com/fideliza/fideliza/domain/points"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/salereturn"
)

// maxPOSBody bounds a POS request: a sale of 1,000 items fits.
const maxPOSBody = 2 << 20

// posRoutes mounts the tenant point-of-sale interface. Its checks run in the
// order DESIGN.md gives, for every route here: tenant id format (400),
// genuine credentials (401), the path's tenant exists (404), credentials of
// this tenant (401), tenant active (404), then the body.
func (s *server) posRoutes(r chi.Router) {
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
	for _, rt := range posRouteTable {
		s.handle(r, rt)
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

// decodePOS reads a POS JSON body, answering 415, 413 and 400 itself. It
// reads up to maxPOSBody itself: decodeJSON would stop at the 1 MiB of the
// /v1 interface.
func (s *server) decodePOS(w http.ResponseWriter, r *http.Request, v any) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		writeProblem(w, r, http.StatusUnsupportedMediaType, "unsupported-media-type", "Content-Type must be application/json", nil)
		return false
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxPOSBody))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		writeProblem(w, r, http.StatusRequestEntityTooLarge, "payload-too-large", "the body exceeds 2 MiB", nil)
		return false
	case err != nil:
		writeProblem(w, r, http.StatusBadRequest, "validation-error", "the body could not be read", nil)
		return false
	}
	if !utf8.Valid(raw) {
		writeProblem(w, r, http.StatusBadRequest, "validation-error", "the body is not valid UTF-8", nil)
		return false
	}
	err = decodePOSJSON(raw, v)
	var bad errBadJSON
	switch {
	case err == nil:
		return true
	case errors.As(err, &bad):
		writeProblem(w, r, http.StatusBadRequest, "validation-error", bad.msg, nil)
	default:
		s.writePOSError(w, r, err)
	}
	return false
}

// decodePOSJSON decodes one JSON object into v, numbers kept as written.
// Malformed JSON and trailing data are errBadJSON; a value of the wrong type
// is a validation error of its field.
func decodePOSJSON(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	err := dec.Decode(v)
	var typeErr *json.UnmarshalTypeError
	switch {
	case err == nil:
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			return errBadJSON{"the body must hold a single JSON object"}
		}
		return nil
	case errors.As(err, &typeErr):
		if typeErr.Field == "" {
			return errBadJSON{"the body must be a JSON object"}
		}
		return apperr.Malformed(typeErr.Field, "must be %s", jsonKind(typeErr.Type.Kind().String()))
	case errors.Is(err, io.EOF):
		return errBadJSON{"the body is empty"}
	default:
		return errBadJSON{"malformed JSON: " + strings.TrimPrefix(err.Error(), "json: ")}
	}
}

// posDecimal reads a number of a POS body (package guard bounds its
// literal and its magnitude).
func posDecimal(p *apperr.Problems, field string, n *jsonNumber) *decimal.Decimal {
	if n == nil {
		return nil
	}
	return guard.Number(p, field, string(*n))
}

type posCustomerJSON struct {
	ID    *string `json:"id"`
	Type  *string `json:"type"`
	Phone *string `json:"phone"`
}

func (c *posCustomerJSON) input() *app.POSCustomer {
	if c == nil {
		return nil
	}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	return &app.POSCustomer{ID: str(c.ID), Type: str(c.Type), Phone: str(c.Phone)}
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

// identify is POST …/customers/identify.
func (s *server) identify(w http.ResponseWriter, r *http.Request) {
	var body struct {
		SessionID string           `json:"sessionId"`
		Protocol  string           `json:"protocol"`
		Customer  *posCustomerJSON `json:"customer"`
		Store     *storeJSON       `json:"store"`
	}
	if !s.decodePOS(w, r, &body) {
		return
	}
	res, err := s.app.IdentifyCustomer(r.Context(), app.IdentifyInput{SessionID: body.SessionID, Protocol: body.Protocol, Customer: body.Customer.input()})
	if err != nil {
		s.writePOSError(w, r, err)
		return
	}
	c := identifiedJSON{ID: res.Document, Status: res.Status, Type: string(res.Type)}
	if cu := res.Customer; cu != nil {
		first, last, _ := strings.Cut(strings.TrimSpace(cu.Name), " ")
		c.ExternalCode, c.FirstName, c.LastName = cu.ExternalID, nonEmpty(first), nonEmpty(strings.TrimSpace(last))
		c.Phone, c.Email = cu.Phone, cu.Email
		// The point of sale's code of a level: 1 (bronze) to 4 (diamond), 0 for none.
		c.Classification = &classificationJSON{Code: points.Rank(points.Level(cu.Level)) + 1, Description: string(cu.Level)}
	}
	writeJSON(w, http.StatusOK, identificationJSON{Customer: c, PriceCode: res.PriceCode, SessionID: body.SessionID})
}

// identificationJSON is the answer of identify. Its fields, and those of the
// types it holds, are in the order of their names, as a map's keys would be
// written: typed, it costs no sorting of keys, and its bytes stay what they
// were.
type identificationJSON struct {
	Customer  identifiedJSON `json:"customer"`
	PriceCode int            `json:"priceCode"`
	SessionID string         `json:"sessionId"`
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

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// setIf sets key when v is not nil: null fields are omitted.
func setIf(m map[string]any, key string, v *string) {
	if v != nil {
		m[key] = *v
	}
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
}

func discountsIn(p *apperr.Problems, field string, ds []posDiscountJSON) []app.POSDiscount {
	out := make([]app.POSDiscount, len(ds))
	for i, d := range ds {
		out[i] = app.POSDiscount{
			PromotionID: d.PromotionID, PartnerPromotionID: d.PartnerPromotionID,
			UnitDiscount:          posDecimal(p, field+".unitDiscount", d.UnitDiscount),
			UnitPriceWithDiscount: posDecimal(p, field+".unitPriceWithDiscount", d.UnitPriceWithDiscount),
			Quantity:              posDecimal(p, field+".quantity", d.Quantity),
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

// authorize is POST …/discounts/authorizations (and …/authorize).
func (s *server) authorize(w http.ResponseWriter, r *http.Request) {
	var body struct {
		SessionID string           `json:"sessionId"`
		Protocol  string           `json:"protocol"`
		Customer  *posCustomerJSON `json:"customer"`
		Sale      *struct {
			ID             string        `json:"id"`
			Store          storeJSON     `json:"store"`
			Date           string        `json:"date"`
			Amount         *jsonNumber   `json:"amount"`
			IgnoreDiscount bool          `json:"ignoreDiscount"`
			CouponCode     string        `json:"couponCode"`
			Items          []posItemJSON `json:"items"`
		} `json:"sale"`
	}
	if !s.decodePOS(w, r, &body) {
		return
	}
	var p apperr.Problems
	if body.Sale == nil {
		p.Add("sale", "is required")
		s.writePOSError(w, r, p.Malformed())
		return
	}
	in := app.AuthorizeInput{SessionID: body.SessionID, Protocol: body.Protocol, Customer: body.Customer.input(), StoreID: body.Sale.Store.ID,
		IgnoreDiscount: body.Sale.IgnoreDiscount, Date: posInstant(&p, "sale.date", body.Sale.Date), CouponCode: body.Sale.CouponCode}
	posDecimal(&p, "sale.amount", body.Sale.Amount)
	for i, it := range body.Sale.Items {
		f := "sale.items[" + strconv.Itoa(i) + "]"
		in.Items = append(in.Items, app.POSItem{
			ID: it.ID, GTIN: it.GTIN, UnitMeasure: it.UnitMeasure, IgnoreDiscount: it.IgnoreDiscount,
			UnitPrice: posDecimal(&p, f+".unitPrice", it.UnitPrice), Quantity: posDecimal(&p, f+".quantity", it.Quantity),
			Discounts: discountsIn(&p, f+".discounts", it.Discounts), Increases: it.Increases,
		})
	}
	if err := p.Malformed(); err != nil {
		s.writePOSError(w, r, err)
		return
	}
	res, err := s.app.AuthorizeDiscounts(r.Context(), in)
	if err != nil {
		s.writePOSError(w, r, err)
		return
	}
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
	out := authorizationJSON{SessionID: body.SessionID, Messages: []messageJSON{
		{Type: "SUCCESS", Content: strconv.Itoa(res.Applied) + " discount(s) authorized"},
	}, Sale: authorizedSaleJSON{
		Amount: body.Sale.Amount, Date: body.Sale.Date, Items: items, Store: body.Sale.Store, TicketID: body.Sale.ID,
	}}
	if res.Applied == 0 {
		out.Messages[0] = messageJSON{Type: "INFO", Content: "no offers for this customer and cart"}
	}
	if res.Document != "" {
		out.Customer = &posCustomerIDJSON{ID: res.Document}
	}
	writeJSON(w, http.StatusOK, out)
}

// authorizationJSON is the answer of authorize. Its fields are in the order
// of their names, as a map's keys would be written: typed, the answer costs
// no sorting of keys on each request, and its bytes stay what they were.
type authorizationJSON struct {
	Customer  *posCustomerIDJSON `json:"customer,omitempty"`
	Messages  []messageJSON      `json:"messages"`
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

// posInstant reads an ISO 8601 date-time with offset.
func posInstant(p *apperr.Problems, field, v string) *time.Time {
	if v == "" {
		return nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		p.Add(field, "must be an ISO 8601 date-time with offset")
		return nil
	}
	// Checked here too, for the problem to name the document's field.
	if !guard.Time(p, field, t) {
		return nil
	}
	return &t
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

// registerSale is POST …/sales: 202 once the sale and its processing job
// are committed.
func (s *server) registerSale(w http.ResponseWriter, r *http.Request) {
	var body struct {
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
			} `json:"payments"`
			FiscalDocument *fiscalDocumentJSON `json:"fiscalDocument"`
			CouponCode     string              `json:"couponCode"`
		} `json:"sale"`
	}
	if !s.decodePOS(w, r, &body) {
		return
	}
	var p apperr.Problems
	if body.Sale == nil {
		p.Add("sale", "is required")
		s.writePOSError(w, r, p.Malformed())
		return
	}
	sl := body.Sale
	in := app.SaleInput{
		Protocol: body.Protocol, Customer: body.Customer.input(), StoreID: sl.Store.ID, PosID: sl.Store.PosID,
		EmployeeID: sl.Store.EmployeeID, SellerID: sl.Store.SellerID, Channel: sl.Channel, Date: posInstant(&p, "sale.date", sl.Date),
		Amount: posDecimal(&p, "sale.amount", sl.Amount), AmountPayable: posDecimal(&p, "sale.amountPayable", sl.AmountPayable),
		DiscountAmount: posDecimal(&p, "sale.discountAmount", sl.DiscountAmount), CouponCode: sl.CouponCode,
	}
	if sl.ID != nil {
		in.SaleID = string(*sl.ID)
	}
	if sl.FiscalDocument != nil {
		// Stored as the documented fields, re-encoded: the raw JSON could
		// hold what jsonb refuses (lone surrogates, numbers beyond numeric).
		fd, err := json.Marshal(sl.FiscalDocument)
		if err != nil {
			s.writePOSError(w, r, err)
			return
		}
		in.FiscalDocument = fd
	}
	for i, it := range sl.Items {
		f := "sale.items[" + strconv.Itoa(i) + "]"
		in.Items = append(in.Items, app.SaleItemInput{
			ID: it.ID, GTIN: it.GTIN, Description: it.Description,
			UnitPrice: posDecimal(&p, f+".unitPrice", it.UnitPrice), Quantity: posDecimal(&p, f+".quantity", it.Quantity),
			Discounts: discountsIn(&p, f+".discounts", it.Discounts),
		})
	}
	for i, pm := range sl.Payments {
		f := "sale.payments[" + strconv.Itoa(i) + "]"
		pay := app.SalePaymentInput{Amount: posDecimal(&p, f+".amount", pm.Amount), Method: pm.Method, Bin: pm.Bin,
			NSU: pm.NSU, Installments: pm.Installments}
		if pm.ID != nil {
			pay.ID = string(*pm.ID)
		}
		in.Payments = append(in.Payments, pay)
	}
	if err := p.Malformed(); err != nil {
		s.writePOSError(w, r, err)
		return
	}
	stored, err := s.app.RegisterSale(r.Context(), in)
	if err != nil {
		s.writePOSError(w, r, err)
		return
	}
	cust := map[string]any{"id": stored.CustomerDocument, "type": nil} // null: not identified
	if stored.CustomerDocumentType != nil {
		cust["type"] = string(*stored.CustomerDocumentType)
	}
	writeJSON(w, http.StatusAccepted, map[string]any{
		"customer": cust,
		"sale":     map[string]any{"id": sl.ID, "status": "RECEIVED"},
		"messages": []messageJSON{{Type: "SUCCESS", Content: "sale received for processing"}},
	})
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

// cancelSale is POST …/sales/{saleId}/cancellation: every unit not yet
// returned comes back; 202 once stored with its processing job.
func (s *server) cancelSale(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Protocol     string          `json:"protocol"`
		Cancellation *saleReturnJSON `json:"cancellation"`
	}
	if !s.decodePOS(w, r, &body) {
		return
	}
	s.registerSaleReturn(w, r, salereturn.KindCancellation, body.Protocol, body.Cancellation)
}

// returnSaleItems is POST …/sales/{saleId}/returns: the units listed come
// back; 202 once stored with its processing job.
func (s *server) returnSaleItems(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Protocol string          `json:"protocol"`
		Return   *saleReturnJSON `json:"return"`
	}
	if !s.decodePOS(w, r, &body) {
		return
	}
	s.registerSaleReturn(w, r, salereturn.KindReturn, body.Protocol, body.Return)
}

func (s *server) registerSaleReturn(w http.ResponseWriter, r *http.Request, kind salereturn.Kind, protocol string, body *saleReturnJSON) {
	var p apperr.Problems
	if body == nil {
		p.Add(string(kind), "is required")
		s.writePOSError(w, r, p.Malformed())
		return
	}
	in := app.SaleReturnInput{
		Protocol: protocol, SaleRef: chi.URLParam(r, "saleId"), Kind: kind, ID: body.ID,
		StoreID: body.Store.ID, PosID: body.Store.PosID, Reason: body.Reason,
		Date: posInstant(&p, string(kind)+".date", body.Date), ItemsWereListed: body.Items != nil,
	}
	for i, it := range body.Items {
		in.Items = append(in.Items, app.ReturnItemInput{ID: it.ID,
			Quantity: posDecimal(&p, string(kind)+".items["+strconv.Itoa(i)+"].quantity", it.Quantity)})
	}
	if err := p.Malformed(); err != nil {
		s.writePOSError(w, r, err)
		return
	}
	ret, err := s.app.RegisterSaleReturn(r.Context(), in)
	if err != nil {
		s.writePOSError(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{
		string(kind): renderReturn(ret),
		"messages":   []messageJSON{{Type: "SUCCESS", Content: string(kind) + " received for processing"}},
	})
}

// renderReturn is a return or cancellation as the POS sees it.
func renderReturn(ret *ent.SaleReturn) map[string]any {
	out := map[string]any{
		"id": ret.ExternalID, "returnId": ret.ID, "kind": ret.Kind, "status": ret.Status,
		"amount": json.Number(ret.Amount.String()), "pointsReversed": ret.PointsReversed, "receivedAt": timestamp(ret.CreatedAt),
	}
	if ret.ProcessedAt != nil {
		out["processedAt"] = timestamp(*ret.ProcessedAt)
	}
	return out
}

// saleOutcome is GET …/sales/{saleId}: the outcome of processing.
func (s *server) saleOutcome(w http.ResponseWriter, r *http.Request) {
	sl, err := s.app.SaleOutcome(r.Context(), chi.URLParam(r, "saleId"), r.URL.Query().Get("storeId"))
	if err != nil {
		s.writePOSError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, renderSale(sl))
}

func renderSale(sl *ent.Sale) map[string]any {
	out := map[string]any{
		"id": sl.ExternalID, "saleId": sl.ID, "status": sl.Status, "receivedAt": timestamp(sl.CreatedAt),
		"pointsCredited": sl.PointsCredited, "amountPayable": json.Number(sl.AmountPayable.String()),
	}
	if sl.Edges.Store != nil {
		out["store"] = map[string]any{"id": sl.Edges.Store.Code}
	}
	setIf(out, "reason", sl.FailureReason)
	if sl.ProcessedAt != nil {
		out["processedAt"] = timestamp(*sl.ProcessedAt)
	}
	out["pointsReversed"] = sl.PointsReversed
	out["returnedAmount"] = json.Number(sl.ReturnedAmount.String())
	returns := make([]map[string]any, len(sl.Edges.Returns))
	for i, ret := range sl.Edges.Returns {
		returns[i] = renderReturn(ret)
	}
	out["returns"] = returns
	return map[string]any{"sale": out}
}
