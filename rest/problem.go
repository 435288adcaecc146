package rest

import (
	"encoding/json"
	"errors"
	"html/template"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/httperr"
)

// problem is an RFC 9457 problem detail, the error body of the POS
// interface.
type problem struct {
	Type          string              `json:"type"`
	Title         string              `json:"title"`
	Status        int                 `json:"status"`
	Detail        string              `json:"detail,omitempty"`
	Instance      string              `json:"instance,omitempty"`
	CorrelationID string              `json:"correlationId,omitempty"`
	Errors        []apperr.FieldError `json:"errors,omitempty"`
}

// problemKinds are the problem types of the POS interface: the title every
// problem of the type carries and the page its type URI (/problems/<id>)
// serves (RFC 9457 §3.1.1).
var problemKinds = map[string]struct{ Title, About string }{
	"validation-error":           {"Invalid request", "The request does not follow the interface document: a field is missing, malformed or out of range. The errors list names each field and what is wrong with it; correct the request before sending it again."},
	"unauthorized":               {"Invalid credentials", "The HTTP Basic credentials are missing, wrong, revoked, or belong to a client of another tenant. Check the client id and secret of this tenant's point-of-sale client."},
	"tenant-not-found":           {"Tenant not found or inactive", "The tenant in the path does not exist or is inactive. Check the tenant id configured at the point of sale."},
	"resource-not-found":         {"Resource not found", "No such path, sale or other resource. Check the path and the id sent."},
	"sale-value-inconsistency":   {"Sale value inconsistent with its items", "The sale's values do not add up within the tenant's tolerance: items to amount, discounts to discountAmount, amount minus discountAmount to amountPayable, payments to amountPayable. The detail names the field."},
	"sale-notification-disabled": {"Sale registration disabled", "This tenant does not accept sales from the point of sale. The sale was not stored; ask the retailer to enable sale registration."},
	"service-unavailable":        {"Service unavailable", "The service could not complete the request for now. Nothing was stored; send the same request again after a short wait."},
	"internal-error":             {"Internal error", "An unexpected failure. Nothing was stored; send the same request again, and report the correlation id if it persists."},
	"method-not-allowed":         {"Method not allowed", "The path exists but not with this method; the Allow header lists the methods it serves."},
	"payload-too-large":          {"Request body too large", "The body is over the size the interface accepts (2 MiB)."},
	"unsupported-media-type":     {"Unsupported media type", "Bodies must be JSON sent with Content-Type: application/json."},
	"rate-limited":               {"Too many requests", "The client or the address is over its quota. Wait for the number of seconds in Retry-After before sending again."},
	"conflict":                   {"Conflict with existing data", "The request conflicts with data already stored (a duplicate, or a state that no longer allows it)."},
	"forbidden":                  {"Not allowed", "The client is authenticated but may not do this."},
	"sale-not-returnable":        {"Sale not returnable", "The sale failed processing and credited nothing: there is nothing to return or cancel."},
	"points-payment-offline":     {"Points payment on an offline sale", "A sale finished offline (sale.offline: the service did not answer) cannot carry a POINTS payment: no hold reserved its points. Register it with the points paid another way, or not at all."},
	"points-hold-unavailable":    {"Points hold unavailable", "The hold a POINTS payment names is unknown, has lapsed (15 minutes) or was released, is another customer's, is for another amount, or another sale took it. Ask for a new hold."},
	"points-hold-foreign":        {"Points hold of another channel or store", "The hold belongs to what it was placed for: an online order's hold pays only that order, and a till's hold only a sale of the store whose till placed it; neither is released by the other channel. Ask for a hold here."},
	"insufficient-points":        {"Not enough points", "The customer's balance less the points already held is lower than the points asked (or the customer owes points taken back by a return)."},
	"points-payment-refused":     {"Points payment refused", "The programme does not take this points payment: points are not taken at the till, fewer points than the least spent at once, more than the programme's share of the sale, or a POINTS payment without its holdId. The detail says which."},
	"gift-card-not-sellable":     {"Gift card not sellable", "A sale line's gift card cannot be sold: the card is not inactive (already active, expired or cancelled), another sale sold it, or the line is not one undiscounted unit at the card's face value. The sale was not stored; sell another card or correct the line."},
	"gift-card-not-returnable":   {"Gift card not returnable", "A gift card sold by the sale was spent, loaded or has expired since: it no longer comes back with the sale. Return the other items without it."},
	"wallet-payment-offline":     {"Wallet payment on an offline sale", "A sale finished offline (sale.offline) cannot carry a CASHBACK or GIFT_CARD payment: nothing was held. Register it with that part paid another way."},
	"wallet-hold-unavailable":    {"Wallet hold unavailable", "The hold a CASHBACK or GIFT_CARD payment names is unknown, has lapsed (15 minutes) or was released, is another wallet's, another customer's, for another amount, or another sale took it. Ask for a new hold."},
	"wallet-hold-foreign":        {"Wallet hold of another channel or store", "The hold belongs to what it was placed for: an online order's hold pays only that order, and a till's hold only a sale of the store whose till placed it. Ask for a hold here."},
	"insufficient-balance":       {"Not enough balance", "The cashback wallet's or gift card's balance less what is already held of it is lower than the amount asked (or the cashback wallet owes cashback taken back by a return)."},
	"wallet-payment-refused":     {"Wallet payment refused", "The programme does not take this cashback payment (not at the till, less than the least spent at once, more than its share of the sale, or an unidentified customer), or a CASHBACK or GIFT_CARD payment came without its holdId. The detail says which."},
	"unprocessable":              {"Request inconsistent", "The request is well formed but breaks a rule of the operation; the detail says which."},
}

// writeProblem answers with a problem of the given identifier. Its instance
// is the request's path as sent (escaped): a URI reference, as RFC 9457
// wants, even when the decoded path holds NUL or invalid UTF-8.
func writeProblem(w http.ResponseWriter, r *http.Request, status int, id, detail string, errs []apperr.FieldError) {
	p := problem{
		Type: "/problems/" + id, Title: problemKinds[id].Title, Status: status, Detail: detail,
		Instance: r.URL.EscapedPath(), Errors: errs,
	}
	if r.Header.Get("X-Correlation-Id") != "" {
		p.CorrelationID = RequestID(r.Context())
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Basic realm="fideliza-pos"`)
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(p)
}

// posProblems are the problem identifiers of the operations' own codes; the
// other errors are named by their kind.
var posProblems = map[string]string{
	"sale_value_inconsistency":   "sale-value-inconsistency",
	"sale_registration_disabled": "sale-notification-disabled",
	"sale_not_returnable":        "sale-not-returnable",
	"points_payment_offline":     "points-payment-offline",
	"points_hold_unavailable":    "points-hold-unavailable",
	"points_hold_foreign":        "points-hold-foreign",
	"insufficient_points":        "insufficient-points",
	"points_payment_off":         "points-payment-refused",
	"points_below_minimum":       "points-payment-refused",
	"points_over_share":          "points-payment-refused",
	"points_hold_required":       "points-payment-refused",
	"gift_card_not_sellable":     "gift-card-not-sellable",
	"gift_card_not_returnable":   "gift-card-not-returnable",
	"wallet_payment_offline":     "wallet-payment-offline",
	"cashback_hold_unavailable":  "wallet-hold-unavailable",
	"gift_card_hold_unavailable": "wallet-hold-unavailable",
	"cashback_hold_foreign":      "wallet-hold-foreign",
	"gift_card_hold_foreign":     "wallet-hold-foreign",
	"cashback_insufficient":      "insufficient-balance",
	"gift_card_insufficient":     "insufficient-balance",
	"cashback_payment_off":       "wallet-payment-refused",
	"cashback_below_minimum":     "wallet-payment-refused",
	"cashback_over_share":        "wallet-payment-refused",
	"wallet_hold_required":       "wallet-payment-refused",
}

// writePOSError answers an operation's error as a problem with its kind's
// status (package httperr); errors without a kind are logged and answered
// 500 without their cause.
func (s *server) writePOSError(w http.ResponseWriter, r *http.Request, err error) {
	if refused := (bodyRefusal{}); errors.As(err, &refused) {
		writeProblem(w, r, refused.status, refused.code, refused.message, nil)
		return
	}
	e, ok := httperr.As(err)
	if !ok {
		if s.unexpected(w, r, err) {
			writeProblem(w, r, http.StatusInternalServerError, "internal-error", "an unexpected error occurred; quote the correlation id "+RequestID(r.Context()), nil)
		}
		return
	}
	s.logCause(r, e)
	status := httperr.Status(e.Kind)
	httperr.SetRetryAfter(w.Header(), e)
	switch e.Kind {
	case apperr.KindInvalid, apperr.KindMalformed:
		writeProblem(w, r, status, "validation-error", e.Message, e.Details)
	case apperr.KindNotFound:
		writeProblem(w, r, status, "resource-not-found", e.Message, nil)
	case apperr.KindConflict, apperr.KindForbidden, apperr.KindUnprocessable, apperr.KindUnavailable, apperr.KindRateLimited:
		id, ok := posProblems[e.Code]
		if !ok {
			id = map[apperr.Kind]string{apperr.KindConflict: "conflict", apperr.KindForbidden: "forbidden",
				apperr.KindUnprocessable: "unprocessable", apperr.KindUnavailable: "service-unavailable",
				apperr.KindRateLimited: "rate-limited"}[e.Kind]
		}
		writeProblem(w, r, status, id, e.Message, nil)
	}
}

// problemPage is GET /problems/{id}: a short page on a problem type, from
// the same table as the titles, so a problem's type URI resolves.
func (s *server) problemPage(w http.ResponseWriter, r *http.Request) {
	kind, ok := problemKinds[chi.URLParam(r, "id")]
	if !ok {
		writeProblem(w, r, http.StatusNotFound, "resource-not-found", "no such problem type", nil)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=86400")
	_ = problemPageTemplate.Execute(w, kind)
}

var problemPageTemplate = template.Must(template.New("problem").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title></head>
<body><h1>{{.Title}}</h1><p>{{.About}}</p>
<p>A problem of the Fideliza point-of-sale interface (RFC 9457).</p></body></html>
`))
