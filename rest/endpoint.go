package rest

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"entgo.io/contrib/entgql"
	"github.com/go-chi/chi/v5"
	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/guard"
	"github.com/fideliza/fideliza/ent"
)

// An endpoint is the work of one route of a JSON interface, in three typed
// steps: read builds the operation's request from the HTTP request (path,
// query, headers, JSON body); op is the one operation of the application it
// calls; render makes the typed answer, written as JSON with status. Every
// error, the request's or the operation's, takes the interface's one error
// path.
type endpoint[Req, Out, Resp any] struct {
	api    api
	status int
	read   func(*binder) Req
	op     func(context.Context, Req) (Out, error)
	render func(Req, Out) Resp
}

// handle is the endpoint of an operation whose answer is rendered from its
// result alone.
func handle[Req, Out, Resp any](a api, status int, read func(*binder) Req,
	op func(context.Context, Req) (Out, error), render func(Out) Resp) http.HandlerFunc {
	return handleWith(a, status, read, op, func(_ Req, out Out) Resp { return render(out) })
}

// handleWith is the endpoint of an operation whose answer also shows some
// of its request (an id of the path, fields echoed back).
func handleWith[Req, Out, Resp any](a api, status int, read func(*binder) Req,
	op func(context.Context, Req) (Out, error), render func(Req, Out) Resp) http.HandlerFunc {
	return endpoint[Req, Out, Resp]{api: a, status: status, read: read, op: op, render: render}.serve
}

func (e endpoint[Req, Out, Resp]) serve(w http.ResponseWriter, r *http.Request) {
	b := &binder{w: w, r: r, rules: e.api.body}
	req := e.read(b)
	err := b.refused
	if err == nil {
		err = e.api.problems(b.problems)
	}
	var out Out
	if err == nil {
		out, err = e.op(r.Context(), req)
	}
	if err != nil {
		e.api.fail(w, r, err)
		return
	}
	writeAnswer(w, e.status, e.render(req, out))
}

// api is one of the JSON interfaces, bound to its server: how it reads
// bodies, which error its problems make, and its error path.
type api struct {
	body     *bodyRules
	problems func(apperr.Problems) error
	fail     func(http.ResponseWriter, *http.Request, error)
}

// v1 is the interface of /v1, /v2 and the points paths.
func (s *server) v1() api {
	return api{body: &v1Body, problems: apperr.Problems.Err, fail: s.writeV1Error}
}

// pos is the point-of-sale interface.
func (s *server) pos() api {
	return api{body: &posBody, problems: apperr.Problems.Malformed, fail: s.writePOSError}
}

// headed is an answer that sets headers of its own.
type headed interface{ header(http.Header) }

// rawAnswer is an answer already encoded (a stored idempotent response),
// written as it is with its own status.
type rawAnswer interface {
	raw() (status int, body []byte)
}

// writeAnswer writes an endpoint's answer: its headers, then the JSON (no
// body with 204 No Content).
func writeAnswer(w http.ResponseWriter, status int, resp any) {
	if h, ok := resp.(headed); ok {
		h.header(w.Header())
	}
	if raw, ok := resp.(rawAnswer); ok {
		status, body := raw.raw()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(body)
		return
	}
	if status == http.StatusNoContent {
		w.WriteHeader(status)
		return
	}
	writeJSON(w, status, resp)
}

// location is the Location header of an answer that created a resource;
// embedded in the answer, it is no field of its JSON.
type location string

func (l location) header(h http.Header) { h.Set("Location", string(l)) }

// replayMark says an answer replays the first one of an idempotent request
// (header Idempotent-Replayed); embedded, it is no field of the JSON.
type replayMark struct{ replayed bool }

func (m replayMark) header(h http.Header) {
	if m.replayed {
		h.Set("Idempotent-Replayed", "true")
	}
}

// binder reads an endpoint's request, gathering the problems of what it
// cannot read; a body refused (wrong media type, too large, not JSON) stops
// the request before its problems are looked at.
type binder struct {
	w        http.ResponseWriter
	r        *http.Request
	rules    *bodyRules
	problems apperr.Problems
	refused  error
}

// body decodes the JSON body into v and returns its bytes.
func (b *binder) body(v any) []byte {
	raw, err := readJSON(b.w, b.r, b.rules, v)
	if err != nil && b.refused == nil {
		b.refused = err
	}
	return raw
}

// refuse stops the request with err, answered on the error path.
func (b *binder) refuse(err error) {
	if b.refused == nil {
		b.refused = err
	}
}

func (b *binder) path(name string) string  { return chi.URLParam(b.r, name) }
func (b *binder) query(name string) string { return b.r.URL.Query().Get(name) }

// page reads the limit and cursor of a list keyed by ids of idPrefix.
func (b *binder) page(idPrefix string) pageRequest {
	after, limit := pageQuery(b.r.URL.Query(), idPrefix, false, &b.problems)
	return pageRequest{after: after, limit: limit}
}

// valuedPage is page for a list that may be in another order than by id:
// its cursors carry the order's value too, which the operation checks.
func (b *binder) valuedPage(idPrefix string) pageRequest {
	after, limit := pageQuery(b.r.URL.Query(), idPrefix, true, &b.problems)
	return pageRequest{after: after, limit: limit}
}

// amount is the query parameter name as an amount, nil when absent, else
// the amount or a problem of name.
func (b *binder) amount(name string) *decimal.Decimal {
	v := b.query(name)
	if v == "" {
		return nil
	}
	d, err := decimal.NewFromString(v)
	if err != nil {
		b.problems.Add(name, "must be an amount in R$, such as 150.00")
		return nil
	}
	return &d
}

// count is the query parameter name as a whole number of at least 0, nil
// when absent, else the number or a problem of name.
func (b *binder) count(name string) *int64 {
	v := b.query(name)
	if v == "" {
		return nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		b.problems.Add(name, "must be a whole number of at least 0")
		return nil
	}
	return &n
}

// instantForm is what a date field takes.
type instantForm int

const (
	// dateTime is an ISO 8601 date-time with its offset.
	dateTime instantForm = iota
	// dateOrDateTime also takes a date alone, meaning midnight UTC (the
	// bounds of lists' filters).
	dateOrDateTime
)

// instant is the one reader of the interfaces' dates: v in form, nil when
// empty (a missing value is the operation's to report), else the instant
// or a problem of field. Instants outside what the databases store (package
// guard) are a problem here too, named as the interface names the field.
func instant(p *apperr.Problems, field, v string, form instantForm) *time.Time {
	if v == "" {
		return nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil && form == dateOrDateTime {
		t, err = time.Parse(time.DateOnly, v)
	}
	switch {
	case err != nil && form == dateOrDateTime:
		p.Add(field, "must be an ISO 8601 date or date-time, such as 2026-03-01T00:00:00-03:00")
		return nil
	case err != nil:
		p.Add(field, "must be an ISO 8601 date-time with offset, such as 2026-03-01T00:00:00-03:00")
		return nil
	case !guard.Time(p, field, t):
		return nil
	}
	return &t
}

// pageRequest is a page of a list: after the cursor, at most limit items.
type pageRequest struct {
	after *ent.Cursor
	limit int
}

// pageOnPath reads a page of the list of the resource the path names, keyed
// by ids of idPrefix.
func pageOnPath(idPrefix string) func(*binder) paged[string] {
	return func(b *binder) paged[string] { return paged[string]{pageRequest: b.page(idPrefix), filter: pathID(b)} }
}

// pageOf renders a page of a list: each edge of a connection, and its
// page info.
func pageOf[E, T any](edges []E, info entgql.PageInfo[string], total int, render func(E) T) listJSON[T] {
	items := make([]T, 0, len(edges))
	for _, e := range edges {
		items = append(items, render(e))
	}
	return listJSON[T]{Data: items, Pagination: newPagination(info, total)}
}

// paged is a page of a list of filter's items.
type paged[F any] struct {
	filter F
	pageRequest
}

// pagedOp adapts a list operation to an endpoint.
func pagedOp[F, C any](op func(context.Context, F, *ent.Cursor, int) (C, error)) func(context.Context, paged[F]) (C, error) {
	return func(ctx context.Context, q paged[F]) (C, error) { return op(ctx, q.filter, q.after, q.limit) }
}

// onPath is a request on the resource the path names, with more input.
type onPath[T any] struct {
	id string
	in T
}

// onPathOp adapts an operation on a resource to an endpoint.
func onPathOp[T, O any](op func(context.Context, string, T) (O, error)) func(context.Context, onPath[T]) (O, error) {
	return func(ctx context.Context, q onPath[T]) (O, error) { return op(ctx, q.id, q.in) }
}

// noContent adapts an operation answering nothing (204) to an endpoint.
func noContent[Req any](op func(context.Context, Req) error) func(context.Context, Req) (struct{}, error) {
	return func(ctx context.Context, req Req) (struct{}, error) { return struct{}{}, op(ctx, req) }
}

// inputOp adapts an operation to a request that carries its input with
// what the answer echoes.
func inputOp[Req interface{ input() In }, In, O any](op func(context.Context, In) (O, error)) func(context.Context, Req) (O, error) {
	return func(ctx context.Context, req Req) (O, error) { return op(ctx, req.input()) }
}

// noInput adapts an operation that takes no input to an endpoint.
func noInput[O any](op func(context.Context) (O, error)) func(context.Context, struct{}) (O, error) {
	return func(ctx context.Context, _ struct{}) (O, error) { return op(ctx) }
}

// noRequest reads nothing: the operation takes no input.
func noRequest(*binder) struct{} { return struct{}{} }

// pathID reads the path parameter id.
func pathID(b *binder) string { return b.path("id") }

// pathCustomerID reads the path parameter customer_id.
func pathCustomerID(b *binder) string { return b.path("customer_id") }

// jsonBody reads a JSON body of type T.
func jsonBody[T any](b *binder) T {
	var v T
	b.body(&v)
	return v
}

// same is the answer that is the operation's result.
func same[T any](t T) T { return t }

// listJSON is a page of a list as the interfaces show it.
type listJSON[T any] struct {
	Data       []T        `json:"data"`
	Pagination pagination `json:"pagination"`
}
