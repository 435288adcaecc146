// Package httperr gives each error kind its one HTTP status. Every HTTP
// interface (/v1, the point-of-sale problems, the developer panel, GraphQL's
// request errors) answers a kind with this status and differs only in body.
package httperr

import (
	"math"
	"net/http"
	"strconv"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/storage"
)

// As returns the operation error err is: its *apperr.Error, or, when the
// database failed to serve (storage.Unavailable) or did not in the
// request's time (storage.Overloaded), an unavailable or overloaded error
// whose cause is to be logged. ok is false for an internal error.
func As(err error) (e *apperr.Error, ok bool) {
	if e, ok := apperr.As(err); ok {
		return e, true
	}
	switch {
	case storage.Overloaded(err):
		return apperr.Overloaded(err), true
	case storage.Unavailable(err):
		return apperr.Unavailable(err), true
	}
	return nil, false
}

// Status is the HTTP status of an error of kind k; an error of no kind is an
// internal error.
func Status(k apperr.Kind) int {
	switch k {
	case apperr.KindInvalid, apperr.KindUnprocessable:
		return http.StatusUnprocessableEntity
	case apperr.KindMalformed:
		return http.StatusBadRequest
	case apperr.KindNotFound:
		return http.StatusNotFound
	case apperr.KindConflict:
		return http.StatusConflict
	case apperr.KindForbidden:
		return http.StatusForbidden
	case apperr.KindUnavailable:
		return http.StatusServiceUnavailable
	case apperr.KindRateLimited:
		return http.StatusTooManyRequests
	}
	return http.StatusInternalServerError
}

// SetRetryAfter writes the Retry-After header (whole seconds, at least one)
// of a refusal that says when a retry may succeed: the same header on every
// interface.
func SetRetryAfter(h http.Header, e *apperr.Error) {
	if e.Kind == apperr.KindRateLimited && e.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(max(int(math.Ceil(e.RetryAfter.Seconds())), 1)))
	}
}
