package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/httperr"
)

// maxJSONBody bounds request bodies of the JSON interfaces.
const maxJSONBody = 1 << 20

// v1Error is the error body of the /v1 and /points interface.
type v1Error struct {
	Error            string              `json:"error"`
	Message          string              `json:"message,omitempty"`
	ErrorDescription string              `json:"error_description,omitempty"`
	Field            string              `json:"field,omitempty"`
	Details          []apperr.FieldError `json:"details,omitempty"`
}

// writeV1Error renders err in the /v1 format; errors without a kind are
// logged and answered 500 without their cause.
func (s *server) writeV1Error(w http.ResponseWriter, r *http.Request, err error) {
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

// errBadJSON is a body that is not the JSON the operation takes.
type errBadJSON struct{ msg string }

func (e errBadJSON) Error() string { return e.msg }

// errMediaType is a body declared as something other than JSON.
type errMediaType struct{ got string }

func (e errMediaType) Error() string { return "Content-Type " + e.got + " is not application/json" }

// decodeJSON reads the body into v. Syntax errors, a wrong content type and
// trailing data are 400 invalid_json; a value of the wrong type is a 422 on
// its field.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || (mt != "application/json" && mt != "application/merge-patch+json") {
			return errMediaType{ct}
		}
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxJSONBody))
	if err == nil && !utf8.Valid(raw) {
		// JSON is UTF-8 (RFC 8259); the decoder would store U+FFFD instead.
		return errBadJSON{"the body is not valid UTF-8"}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err == nil {
		err = dec.Decode(v)
	}
	var typeErr *json.UnmarshalTypeError
	var tooBig *http.MaxBytesError
	switch {
	case err == nil:
		// Only white space may follow the value. dec.More would miss a
		// stray "}" or "]", which it reads as the end of a container.
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			return errBadJSON{"the body must hold a single JSON object"}
		}
		return nil
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if field == "" {
			return errBadJSON{"the body must be a JSON object"}
		}
		return apperr.Invalid(field, "must be %s", jsonKind(typeErr.Type.Kind().String()))
	case errors.As(err, &tooBig):
		return errBadJSON{fmt.Sprintf("the body exceeds %d bytes", maxJSONBody)}
	case errors.Is(err, io.EOF):
		return errBadJSON{"the body is empty"}
	default:
		return errBadJSON{"malformed JSON: " + strings.TrimPrefix(err.Error(), "json: ")}
	}
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "int", "int64", "float64":
		return "a number"
	case "struct", "map":
		return "an object"
	case "slice":
		return "an array"
	}
	return "of another type"
}

// decodeV1 decodes the body or writes the error and returns false.
func (s *server) decodeV1(w http.ResponseWriter, r *http.Request, v any) bool {
	err := decodeJSON(w, r, v)
	var bad errBadJSON
	var media errMediaType
	switch {
	case err == nil:
		return true
	case errors.As(err, &media):
		writeJSON(w, http.StatusUnsupportedMediaType, v1Error{Error: "unsupported_media_type", Message: media.Error()})
	case errors.As(err, &bad):
		writeJSON(w, http.StatusBadRequest, v1Error{Error: "invalid_json", Message: bad.msg})
	default:
		s.writeV1Error(w, r, err)
	}
	return false
}
