package tracing

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"log/slog"
	"net/http"

	"github.com/XSAM/otelsql"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// Handler is h with a server span for every request (its parent the
// caller's traceparent header, when sent), or h when tracing is off.
// Route names the span after the route once it is known.
func Handler(h http.Handler) http.Handler {
	if !Enabled() {
		return h
	}
	return otelhttp.NewHandler(h, "http.server",
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method }))
}

// Route names ctx's server span "METHOD route" and sets its http.route
// (route as the router matched it, such as
// /api/v1/tenants/{tenantId}/sales): a span's name must not hold ids.
func Route(ctx context.Context, method, route string) {
	span := trace.SpanFromContext(ctx)
	if route == "" || !span.IsRecording() {
		return
	}
	span.SetName(method + " " + route)
	span.SetAttributes(attribute.String("http.route", route))
}

// Transport is rt with a client span for every request, whose context the
// request carries (traceparent), or rt when tracing is off.
func Transport(rt http.RoundTripper) http.RoundTripper {
	if !Enabled() {
		return rt
	}
	return otelhttp.NewTransport(rt)
}

// OpenDB opens c as sql.OpenDB does; with tracing on, every query,
// statement and transaction of a traced request or job is a span (with
// its SQL, never its arguments). Work outside any span (River's polling,
// maintenance) starts no trace.
func OpenDB(c driver.Connector) *sql.DB {
	if !Enabled() {
		return sql.OpenDB(c)
	}
	return otelsql.OpenDB(c, otelsql.WithSpanOptions(otelsql.SpanOptions{
		OmitConnResetSession: true,
		OmitConnPrepare:      true,
		OmitRows:             true,
		OmitConnectorConnect: true,
		SpanFilter: func(ctx context.Context, _ otelsql.Method, _ string, _ []driver.NamedValue) bool {
			return trace.SpanContextFromContext(ctx).IsValid()
		},
	}))
}

// LogHandler adds the trace_id and span_id of the record's context to
// every line logged in a span (with the Context forms of slog's calls).
func LogHandler(h slog.Handler) slog.Handler { return logHandler{h} }

type logHandler struct{ slog.Handler }

func (h logHandler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

func (h logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return logHandler{h.Handler.WithAttrs(attrs)}
}

func (h logHandler) WithGroup(name string) slog.Handler { return logHandler{h.Handler.WithGroup(name)} }
