// Package openapitest checks HTTP exchanges against the OpenAPI documents of
// package openapi: the contract tests wrap every test server's handler with
// Middleware, so a response that drifts from its document fails the test
// that produced it.
package openapitest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/fideliza/fideliza/openapi"
)

// Reporter receives contract violations; *testing.T and *testing.B are
// Reporters.
type Reporter interface {
	Helper()
	Errorf(format string, args ...any)
}

// Validator matches requests to the operations of the documents and checks
// the responses the operations give.
type Validator struct {
	routers []routers.Router
	names   map[*openapi3.T]string // the file of each document
}

// New builds a validator over the documents of package openapi.
func New() (*Validator, error) {
	v := &Validator{names: map[*openapi3.T]string{}}
	for _, d := range openapi.Documents() {
		doc, err := openapi.Load(d)
		if err != nil {
			return nil, err
		}
		// Requests are matched by path alone: the documents' server ("/")
		// is wherever they are served, and test servers listen anywhere.
		doc.Servers = nil
		r, err := legacy.NewRouter(doc)
		if err != nil {
			return nil, fmt.Errorf("openapitest: routing %s.yaml: %w", d.Name, err)
		}
		v.routers = append(v.routers, r)
		v.names[doc] = "openapi/" + d.Name + ".yaml"
	}
	return v, nil
}

var (
	defaultOnce      sync.Once
	defaultValidator *Validator
	defaultErr       error
)

// Default returns a validator built once per process.
func Default() (*Validator, error) {
	defaultOnce.Do(func() { defaultValidator, defaultErr = New() })
	return defaultValidator, defaultErr
}

// Middleware wraps h with the default validator: see Validator.Middleware.
func Middleware(r Reporter, h http.Handler) http.Handler {
	v, err := Default()
	if err != nil {
		r.Helper()
		r.Errorf("openapitest: %v", err)
		return h
	}
	return v.Middleware(r, h)
}

// Middleware serves each request with next and, when the request's method
// and path are an operation of a document, reports to r every way the
// response differs from the operation's: a status code the operation does
// not list, another content type, a body or a required header that does not
// match the schema, a body where the document has none. Requests are checked
// leniently: tests send invalid requests on purpose, so a request that does
// not match its operation only adds a note to a report about its response.
// Requests of paths outside the documents pass through untouched.
func (v *Validator) Middleware(r Reporter, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		route, params, ok := v.find(req)
		if !ok {
			next.ServeHTTP(w, req)
			return
		}
		var reqBody []byte
		if req.Body != nil && req.Body != http.NoBody {
			reqBody, _ = io.ReadAll(req.Body)
			_ = req.Body.Close()
			req.Body = io.NopCloser(bytes.NewReader(reqBody))
		}
		rec := &recorder{ResponseWriter: w}
		next.ServeHTTP(rec, req)
		if req.Context().Err() != nil {
			// The client went away (or gave up): no one reads the answer,
			// which may be the 499 the access log records.
			return
		}
		if err := v.check(req, reqBody, route, params, rec.result()); err != nil {
			r.Errorf("%v", err)
		}
	})
}

// Exchange is a response to check, with the request that produced it.
type Exchange struct {
	Request     *http.Request
	RequestBody []byte
	Status      int
	Header      http.Header
	Body        []byte
}

// Check reports how the exchange differs from the document that describes
// its request's operation; nil when it matches or when no document
// describes the operation.
func (v *Validator) Check(x Exchange) error {
	route, params, ok := v.find(x.Request)
	if !ok {
		return nil
	}
	return v.check(x.Request, x.RequestBody, route, params, response{status: x.Status, header: x.Header, body: x.Body})
}

func (v *Validator) find(req *http.Request) (*routers.Route, map[string]string, bool) {
	for _, r := range v.routers {
		route, params, err := r.FindRoute(req)
		if err == nil {
			return route, params, true
		}
	}
	return nil, nil, false
}

var noAuth = &openapi3filter.Options{
	AuthenticationFunc:  openapi3filter.NoopAuthenticationFunc,
	SkipSettingDefaults: true,
	MultiError:          true,
}

func (v *Validator) check(req *http.Request, reqBody []byte, route *routers.Route, params map[string]string, res response) error {
	ctx := context.Background()
	clone := req.Clone(ctx)
	clone.Body = io.NopCloser(bytes.NewReader(reqBody))
	in := &openapi3filter.RequestValidationInput{Request: clone, PathParams: params, Route: route, Options: noAuth}
	reqErr := openapi3filter.ValidateRequest(ctx, in)

	opts := *noAuth
	opts.IncludeResponseStatus = true
	in.Options = &opts
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: res.status, Header: res.header, Options: &opts,
	}
	out.SetBodyBytes(res.body)
	err := openapi3filter.ValidateResponse(ctx, out)
	if err == nil {
		err = bodyWithoutContent(route, res)
	}
	if err == nil {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "openapi contract: %s %s (operation %s of %s) answered %d %s, which the document does not allow: %s\nresponse body: %s",
		req.Method, req.URL.RequestURI(), route.Operation.OperationID, v.names[route.Spec], res.status,
		res.header.Get("Content-Type"), describe(err), truncate(res.body))
	if reqErr != nil {
		fmt.Fprintf(&b, "\n(the request does not match the document either: %s)", describe(reqErr))
	}
	return errors.New(b.String())
}

// describe renders a validation error on one line per problem, each schema
// error with the JSON pointer of the value it is about, without the schema
// and value dumps of kin-openapi's messages.
func describe(err error) string {
	var res *openapi3filter.ResponseError
	if errors.As(err, &res) {
		if res.Err == nil {
			return res.Reason
		}
		return res.Reason + ": " + describe(res.Err)
	}
	var req *openapi3filter.RequestError
	if errors.As(err, &req) {
		what := req.Reason
		if req.Parameter != nil {
			what = strings.TrimSpace(fmt.Sprintf("parameter %q %s", req.Parameter.Name, req.Reason))
		}
		if req.Err == nil {
			return what
		}
		return what + ": " + describe(req.Err)
	}
	var me openapi3.MultiError
	if errors.As(err, &me) {
		parts := make([]string, 0, len(me))
		for _, e := range me {
			parts = append(parts, describe(e))
		}
		return strings.Join(parts, "; ")
	}
	var se *openapi3.SchemaError
	if errors.As(err, &se) {
		return fmt.Sprintf("at /%s: %s", strings.Join(se.JSONPointer(), "/"), se.Reason)
	}
	return firstLine(err)
}

// bodyWithoutContent reports a body on a response the document gives no
// content, which kin-openapi lets through.
func bodyWithoutContent(route *routers.Route, res response) error {
	ref := route.Operation.Responses.Status(res.status)
	if ref == nil {
		ref = route.Operation.Responses.Default()
	}
	if ref == nil || ref.Value == nil || len(ref.Value.Content) != 0 || len(bytes.TrimSpace(res.body)) == 0 {
		return nil
	}
	return fmt.Errorf("response %d has a body (%s) but the document gives it no content", res.status, res.header.Get("Content-Type"))
}

func truncate(b []byte) string {
	const limit = 2000
	if len(b) > limit {
		return string(b[:limit]) + "…"
	}
	return string(b)
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// recorder passes a response through and keeps a copy of it.
type recorder struct {
	http.ResponseWriter
	status int
	header http.Header
	body   bytes.Buffer
}

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
		r.header = r.ResponseWriter.Header().Clone()
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.WriteHeader(http.StatusOK)
	}
	r.body.Write(p)
	return r.ResponseWriter.Write(p)
}

// Flush lets streaming handlers flush through the recorder.
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap serves http.ResponseController.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (r *recorder) result() response {
	if r.status == 0 {
		// The handler wrote nothing: net/http answers 200 with no body.
		return response{status: http.StatusOK, header: r.ResponseWriter.Header().Clone()}
	}
	return response{status: r.status, header: r.header, body: r.body.Bytes()}
}
