package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/fideliza/fideliza/domain/apperr"
)

// A bodyRefusal is a request refused before its operation: a body of the
// wrong media type, too large, or not the JSON the operation takes. Each
// interface's error path renders it with its code: an error code of /v1, a
// problem identifier of the point of sale.
type bodyRefusal struct {
	status  int
	code    string
	message string
}

func (e bodyRefusal) Error() string { return e.message }

// bodyRules is how an interface reads JSON bodies.
type bodyRules struct {
	limit int64
	// mediaTypes are the Content-Types taken; typeOptional: a body without
	// one is read as JSON.
	mediaTypes   []string
	typeOptional bool
	// unsupported refuses the Content-Type ct.
	unsupported func(ct string) bodyRefusal
	tooLarge    bodyRefusal
	// malformed is the code of a body that is not JSON.
	malformed string
	// wrongType is the error of a field holding a value of another type.
	wrongType func(field, format string, args ...any) error
}

// v1Body are the bodies of /v1 and the points paths: 1 MiB, a value of
// the wrong type a 422 on its field.
var v1Body = bodyRules{
	limit: 1 << 20, mediaTypes: []string{"application/json", "application/merge-patch+json"}, typeOptional: true,
	unsupported: func(ct string) bodyRefusal {
		return bodyRefusal{http.StatusUnsupportedMediaType, "unsupported_media_type", "Content-Type " + ct + " is not application/json"}
	},
	tooLarge:  bodyRefusal{http.StatusBadRequest, "invalid_json", fmt.Sprintf("the body exceeds %d bytes", 1<<20)},
	malformed: "invalid_json", wrongType: apperr.Invalid,
}

// posBody are the bodies of the point of sale: a sale of 1,000 items fits
// in 2 MiB; a value of the wrong type is a validation error (400).
var posBody = bodyRules{
	limit: 2 << 20, mediaTypes: []string{"application/json"},
	unsupported: func(string) bodyRefusal {
		return bodyRefusal{http.StatusUnsupportedMediaType, "unsupported-media-type", "Content-Type must be application/json"}
	},
	tooLarge:  bodyRefusal{http.StatusRequestEntityTooLarge, "payload-too-large", "the body exceeds 2 MiB"},
	malformed: "validation-error", wrongType: apperr.Malformed,
}

// readJSON is the one JSON decoder of the interfaces: it reads the body
// (within the rules' limit) into v, numbers kept as written, and returns
// its bytes. Malformed JSON, trailing data and invalid UTF-8 are refused;
// a value of the wrong type is an error of its field.
func readJSON(w http.ResponseWriter, r *http.Request, rules *bodyRules, v any) ([]byte, error) {
	ct := r.Header.Get("Content-Type")
	if ct != "" || !rules.typeOptional {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || !slices.Contains(rules.mediaTypes, mt) {
			return nil, rules.unsupported(ct)
		}
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, rules.limit))
	bad := func(message string) error { return bodyRefusal{http.StatusBadRequest, rules.malformed, message} }
	if tooBig := new(http.MaxBytesError); errors.As(err, &tooBig) {
		return nil, rules.tooLarge
	} else if err != nil {
		return nil, bad("the body could not be read")
	}
	if !utf8.Valid(raw) {
		// JSON is UTF-8 (RFC 8259); the decoder would store U+FFFD instead.
		return raw, bad("the body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	err = dec.Decode(v)
	var typeErr *json.UnmarshalTypeError
	switch {
	case err == nil:
		// Only white space may follow the value. dec.More would miss a
		// stray "}" or "]", which it reads as the end of a container.
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			return raw, bad("the body must hold a single JSON object")
		}
		return raw, nil
	case errors.As(err, &typeErr):
		if typeErr.Field == "" {
			return raw, bad("the body must be a JSON object")
		}
		return raw, rules.wrongType(typeErr.Field, "must be %s", jsonKind(typeErr.Type.Kind().String()))
	case errors.Is(err, io.EOF):
		return raw, bad("the body is empty")
	default:
		return raw, bad("malformed JSON: " + strings.TrimPrefix(err.Error(), "json: "))
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
