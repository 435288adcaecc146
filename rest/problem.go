package rest

import (
	"encoding/json"
	"net/http"

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

var problemTitles = map[string]string{
	"validation-error":           "Invalid request",
	"unauthorized":               "Invalid credentials",
	"tenant-not-found":           "Tenant not found or inactive",
	"resource-not-found":         "Resource not found",
	"sale-value-inconsistency":   "Sale value inconsistent with its items",
	"sale-notification-disabled": "Sale registration disabled",
	"service-unavailable":        "Service unavailable",
	"internal-error":             "Internal error",
	"method-not-allowed":         "Method not allowed",
	"payload-too-large":          "Request body too large",
	"unsupported-media-type":     "Unsupported media type",
	"rate-limited":               "Too many requests",
	"conflict":                   "Conflict with existing data",
	"forbidden":                  "Not allowed",
	"unprocessable":              "Request inconsistent",
}

// writeProblem answers with a problem of the given identifier. Its instance
// is the request's path as sent (escaped): a URI reference, as RFC 9457
// wants, even when the decoded path holds NUL or invalid UTF-8.
func writeProblem(w http.ResponseWriter, r *http.Request, status int, id, detail string, errs []apperr.FieldError) {
	p := problem{
		Type: "/problems/" + id, Title: problemTitles[id], Status: status, Detail: detail,
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
}

// writePOSError answers an operation's error as a problem with its kind's
// status (package httperr); errors without a kind are logged and answered
// 500 without their cause.
func (s *server) writePOSError(w http.ResponseWriter, r *http.Request, err error) {
	e, ok := apperr.As(err)
	if !ok {
		if s.unexpected(w, r, err) {
			writeProblem(w, r, http.StatusInternalServerError, "internal-error", "an unexpected error occurred; quote the correlation id "+RequestID(r.Context()), nil)
		}
		return
	}
	status := httperr.Status(e.Kind)
	switch e.Kind {
	case apperr.KindInvalid, apperr.KindMalformed:
		writeProblem(w, r, status, "validation-error", e.Message, e.Details)
	case apperr.KindNotFound:
		writeProblem(w, r, status, "resource-not-found", e.Message, nil)
	case apperr.KindConflict, apperr.KindForbidden, apperr.KindUnprocessable, apperr.KindUnavailable:
		id, ok := posProblems[e.Code]
		if !ok {
			id = map[apperr.Kind]string{apperr.KindConflict: "conflict", apperr.KindForbidden: "forbidden",
				apperr.KindUnprocessable: "unprocessable", apperr.KindUnavailable: "service-unavailable"}[e.Kind]
		}
		writeProblem(w, r, status, id, e.Message, nil)
	}
}
