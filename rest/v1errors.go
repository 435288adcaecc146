package rest

import (
	"errors"
	"net/http"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/httperr"
)

// v1Error is the error body of the /v1 and /points interface.
type v1Error struct {
	Error            string              `json:"error"`
	Message          string              `json:"message,omitempty"`
	ErrorDescription string              `json:"error_description,omitempty"`
	Field            string              `json:"field,omitempty"`
	Details          []apperr.FieldError `json:"details,omitempty"`
}

// writeV1Error is the error path of the /v1 interface: it renders err in
// the /v1 format; errors without a kind are logged and answered 500 without
// their cause.
func (s *server) writeV1Error(w http.ResponseWriter, r *http.Request, err error) {
	if refused := (bodyRefusal{}); errors.As(err, &refused) {
		writeJSON(w, refused.status, v1Error{Error: refused.code, Message: refused.message})
		return
	}
	e, ok := httperr.As(err)
	if !ok {
		if s.unexpected(w, r, err) {
			writeJSON(w, http.StatusInternalServerError, v1Error{
				Error: "internal_error", Message: "an unexpected error occurred; quote request id " + RequestID(r.Context()),
			})
		}
		return
	}
	s.logCause(r, e)
	status := httperr.Status(e.Kind)
	httperr.SetRetryAfter(w.Header(), e)
	switch e.Kind {
	case apperr.KindInvalid, apperr.KindMalformed, apperr.KindUnprocessable:
		writeJSON(w, status, v1Error{Error: e.Code, Message: e.Message, Field: e.Field, Details: e.Details})
	case apperr.KindNotFound, apperr.KindUnavailable, apperr.KindRateLimited:
		writeJSON(w, status, v1Error{Error: e.Code, Message: e.Message})
	case apperr.KindConflict:
		writeJSON(w, status, v1Error{Error: e.Code, Message: e.Message, Field: e.Field})
	case apperr.KindForbidden:
		writeJSON(w, status, v1Error{Error: e.Code, ErrorDescription: e.Message})
	}
}
