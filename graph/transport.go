package graph

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// The HTTP transport of the GraphQL-over-HTTP specification, written here
// because gqlgen's answers a document that fails to parse or validate with
// 422 (the specification: 200 with application/json, 400 with
// application/graphql-response+json) and writes "data": null in answers to
// request errors, which must have no data entry.
const (
	mediaJSON            = "application/json"
	mediaGraphQLResponse = "application/graphql-response+json"
)

// overHTTP is the transport: POST with a JSON body, and GET for queries.
type overHTTP struct{}

var _ graphql.Transport = overHTTP{}

func (overHTTP) Supports(r *http.Request) bool {
	if r.Method == http.MethodGet {
		return r.Header.Get("Upgrade") == ""
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return r.Method == http.MethodPost && err == nil && mt == mediaJSON
}

func (overHTTP) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	ctx := r.Context()
	media := responseMedia(r)
	w.Header().Set("Content-Type", media+"; charset=utf-8")
	params, err := requestParams(r)
	if err != nil {
		// Not a GraphQL-over-HTTP request: 400 whatever the media type.
		writeRequestError(w, http.StatusBadRequest, exec.DispatchError(ctx, gqlerror.List{err}))
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: graphql.Now(), End: graphql.Now()}
	rc, errs := exec.CreateOperationContext(ctx, params)
	if errs != nil {
		// The document does not parse or validate, or the variables do not
		// coerce: a request error, executed no further.
		status := http.StatusOK
		if media == mediaGraphQLResponse {
			status = http.StatusBadRequest
		}
		writeRequestError(w, status, exec.DispatchError(graphql.WithOperationContext(ctx, rc), errs))
		return
	}
	if r.Method == http.MethodGet && rc.Operation != nil && rc.Operation.Operation != ast.Query {
		w.Header().Set("Allow", http.MethodPost)
		writeRequestError(w, http.StatusMethodNotAllowed, exec.DispatchError(graphql.WithOperationContext(ctx, rc),
			gqlerror.List{requestError("GET may only run queries; send a %s with POST", rc.Operation.Operation)}))
		return
	}
	responses, ctx := exec.DispatchOperation(ctx, rc)
	writeJSON(w, responses(ctx))
}

// responseMedia is the media type the client accepts: the GraphQL
// response type when it asks for it, else application/json (also for no
// Accept, */* and application/*, as the specification's legacy watershed
// says).
func responseMedia(r *http.Request) string {
	for part := range strings.SplitSeq(r.Header.Get("Accept"), ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case mediaGraphQLResponse:
			return mediaGraphQLResponse
		case mediaJSON, "*/*", "application/*":
			return mediaJSON
		}
	}
	return mediaJSON
}

// wireParams are a request's parameters as sent, each checked for its type.
type wireParams struct {
	Query         json.RawMessage `json:"query"`
	OperationName json.RawMessage `json:"operationName"`
	Variables     json.RawMessage `json:"variables"`
	Extensions    json.RawMessage `json:"extensions"`
}

// requestParams reads the parameters of a POST body or a GET query string;
// an error is the client's (a body that is not a JSON object, a parameter
// of the wrong type, no query).
func requestParams(r *http.Request) (*graphql.RawParams, *gqlerror.Error) {
	var wire wireParams
	if r.Method == http.MethodGet {
		q := r.URL.Query()
		quoted := func(s string) json.RawMessage {
			raw, _ := json.Marshal(s)
			return raw
		}
		if q.Has("query") {
			wire.Query = quoted(q.Get("query"))
		}
		if q.Has("operationName") {
			wire.OperationName = quoted(q.Get("operationName"))
		}
		wire.Variables, wire.Extensions = json.RawMessage(q.Get("variables")), json.RawMessage(q.Get("extensions"))
	} else {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, requestError("the request body could not be read")
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		if err := dec.Decode(&wire); err != nil || dec.More() {
			return nil, requestError("the body is not a JSON object of GraphQL request parameters")
		}
	}
	p := &graphql.RawParams{}
	if err := decodeParam(wire.Extensions, &p.Extensions); err != nil {
		return nil, requestError("extensions must be an object or null")
	}
	// A persisted query may send its hash alone (documents.go).
	if err := decodeParam(wire.Query, &p.Query); err != nil || (p.Query == "" && p.Extensions["persistedQuery"] == nil) {
		return nil, requestError("query must be a non-empty string")
	}
	if err := decodeParam(wire.OperationName, &p.OperationName); err != nil {
		return nil, requestError("operationName must be a string or null")
	}
	if err := decodeParam(wire.Variables, &p.Variables); err != nil {
		return nil, requestError("variables must be an object or null")
	}
	return p, nil
}

// decodeParam decodes a parameter into v (a string or a map); absent and
// null leave v as it is. Numbers stay json.Number, as gqlgen expects.
func decodeParam(raw json.RawMessage, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(v)
}

func requestError(format string, args ...any) *gqlerror.Error {
	return &gqlerror.Error{Message: fmt.Sprintf(format, args...), Extensions: map[string]any{"code": codeInvalidQuery}}
}

// writeRequestError answers a request error: errors (and extensions), never
// a data entry.
func writeRequestError(w http.ResponseWriter, status int, resp *graphql.Response) {
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(struct {
		Errors     gqlerror.List  `json:"errors"`
		Extensions map[string]any `json:"extensions,omitempty"`
	}{resp.Errors, resp.Extensions})
}

func writeJSON(w http.ResponseWriter, resp *graphql.Response) {
	_ = json.NewEncoder(w).Encode(resp)
}
