// Package apperr declares the few kinds of error every operation returns,
// with the operation's own code. Package httperr gives each kind its one
// HTTP status; each transport chooses its body and wire identifiers. Messages
// are safe to show: they never carry internal causes or personal data.
package apperr

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Kind classifies an error for the transports.
type Kind int

const (
	KindInvalid       Kind = iota + 1 // the input breaks a rule of the operation
	KindMalformed                     // the request does not follow its interface's document (the POS field rules)
	KindNotFound                      // no such resource visible to the viewer
	KindConflict                      // clashes with existing data
	KindForbidden                     // the viewer may not do this
	KindUnprocessable                 // well-formed but inconsistent (a sale's totals)
	KindUnavailable                   // refused for now (sale registration disabled)
	KindRateLimited                   // too many attempts of the viewer: retry later
)

// Kinds are every kind, for tests that walk them all.
var Kinds = []Kind{KindInvalid, KindMalformed, KindNotFound, KindConflict, KindForbidden, KindUnprocessable, KindUnavailable, KindRateLimited}

func (k Kind) String() string {
	switch k {
	case KindInvalid:
		return "invalid"
	case KindMalformed:
		return "malformed"
	case KindNotFound:
		return "not_found"
	case KindConflict:
		return "conflict"
	case KindForbidden:
		return "forbidden"
	case KindUnprocessable:
		return "unprocessable"
	case KindUnavailable:
		return "unavailable"
	case KindRateLimited:
		return "rate_limited"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// FieldError is one problem of one input field.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Error is an error of an operation.
type Error struct {
	Kind    Kind
	Code    string // machine-readable code: validation_error, not_found, duplicate_customer, …
	Message string
	Field   string       // the (first) offending field, when there is one
	Details []FieldError // every field problem, for KindInvalid
	// RetryAfter is, for KindRateLimited, how long until a retry may
	// succeed; 0 when unknown.
	RetryAfter time.Duration
	// Cause is what went wrong underneath, for the logs only; it is never
	// shown to the client.
	Cause error
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Cause }

// Unavailable says the operation cannot be served now because something it
// needs, the database, is failing; clients retry later. cause is logged.
func Unavailable(cause error) *Error {
	return &Error{Kind: KindUnavailable, Code: "service_unavailable",
		Message: "the service cannot reach its data right now; retry with backoff", Cause: cause}
}

// Overloaded says the operation ran out of time waiting for the database,
// busy serving other requests (a pool with no free connection): the data
// is there, and a retry after a short wait succeeds. cause is logged.
func Overloaded(cause error) *Error {
	return &Error{Kind: KindUnavailable, Code: "overloaded",
		Message: "the service is too busy to answer in time; retry with backoff", Cause: cause}
}

// As returns the *Error in err's chain.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// NotFound says the resource does not exist for the viewer.
func NotFound(what string) *Error {
	return &Error{Kind: KindNotFound, Code: "not_found", Message: what + " not found"}
}

// Conflict says the input clashes with existing data on field.
func Conflict(code, field, message string) *Error {
	return &Error{Kind: KindConflict, Code: code, Field: field, Message: message}
}

// Forbidden says the viewer lacks a right.
func Forbidden(code, message string) *Error {
	return &Error{Kind: KindForbidden, Code: code, Message: message}
}

// Problems gathers field problems so an operation reports them all at once.
type Problems []FieldError

// Add records a problem of field.
func (p *Problems) Add(field, format string, args ...any) {
	*p = append(*p, FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

// Err returns the validation error of the problems, or nil when there are none.
func (p Problems) Err() error { return p.as(KindInvalid) }

// Malformed returns the problems as a request that does not follow its
// interface's document, or nil when there are none.
func (p Problems) Malformed() error { return p.as(KindMalformed) }

func (p Problems) as(k Kind) error {
	if len(p) == 0 {
		return nil
	}
	msgs := make([]string, len(p))
	for i, fe := range p {
		msgs[i] = fe.Field + ": " + fe.Message
	}
	return &Error{Kind: k, Code: "validation_error", Message: strings.Join(msgs, "; "), Field: p[0].Field, Details: p}
}

// Invalid is a validation error of a single field.
func Invalid(field, format string, args ...any) error {
	var p Problems
	p.Add(field, format, args...)
	return p.Err()
}

// Malformed is a request error of a single field.
func Malformed(field, format string, args ...any) error {
	var p Problems
	p.Add(field, format, args...)
	return p.Malformed()
}
