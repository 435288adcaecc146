// Package tracing owns OpenTelemetry tracing: Setup turns it on from the
// standard OTEL_* variables (export over OTLP/HTTP), and the transports wrap
// themselves with what it hands out (Handler, Transport, OpenDB,
// RiverMiddleware). Off, the default, every one of those hands back what it
// was given: no span is started, nothing is wrapped, and a request, a query
// or a job costs what it cost before tracing existed.
package tracing

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Name is the instrumentation scope of the service's own spans.
const Name = "github.com/fideliza/fideliza"

// on says whether spans are recorded: set by Setup (when exporting) and Use.
var on atomic.Bool

// Enabled reports whether tracing is on. The transports read it when they
// are built: Setup (or Use) must come first.
func Enabled() bool { return on.Load() }

// Setup turns tracing on when the environment asks for OTLP export: the
// variable OTEL_TRACES_EXPORTER=otlp, or an OTEL_EXPORTER_OTLP_ENDPOINT
// (or …_TRACES_ENDPOINT) without OTEL_TRACES_EXPORTER=none. The exporter,
// the batch processor, the sampler and the resource read the rest of the
// standard variables (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES,
// OTEL_TRACES_SAMPLER, OTEL_BSP_*, OTEL_EXPORTER_OTLP_HEADERS, …).
// OTEL_SDK_DISABLED=true keeps it off. The protocol is OTLP over HTTP
// (http/protobuf); another is refused. shutdown flushes the spans not yet
// exported; it is a no-op when tracing is off.
func Setup(ctx context.Context) (shutdown func(context.Context) error, err error) {
	nothing := func(context.Context) error { return nil }
	export, err := exporting()
	if err != nil || !export {
		return nothing, err
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nothing, fmt.Errorf("OpenTelemetry exporter: %w", err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "fideliza")),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES override
	)
	if err != nil {
		return nothing, fmt.Errorf("OpenTelemetry resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	Use(tp)
	return tp.Shutdown, nil
}

// exporting reads whether the environment asks for trace export.
func exporting() (bool, error) {
	if strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") {
		return false, nil
	}
	switch exporter := os.Getenv("OTEL_TRACES_EXPORTER"); exporter {
	case "none":
		return false, nil
	case "":
		if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
			return false, nil
		}
	case "otlp":
	default:
		return false, fmt.Errorf("OTEL_TRACES_EXPORTER=%q: fideliza exports traces with otlp, or none", exporter)
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := os.Getenv(name); p != "" {
			if p != "http/protobuf" {
				return false, fmt.Errorf("%s=%q: fideliza exports OTLP over HTTP only (http/protobuf, port 4318)", name, p)
			}
			break
		}
	}
	return true, nil
}

// Use makes tp the provider of every span and the W3C trace context (and
// baggage) the propagator of HTTP requests, and turns tracing on; restore
// puts back the provider before and turns it off. Setup calls it; tests
// call it with an SDK provider over an in-memory exporter.
func Use(tp trace.TracerProvider) (restore func()) {
	before := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	on.Store(true)
	return func() {
		on.Store(false)
		otel.SetTracerProvider(before)
	}
}

// Start starts a span of the service named name under ctx's span; off, it
// starts nothing and hands back ctx and a span that records nothing.
func Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if !on.Load() {
		return ctx, noopSpan
	}
	return otel.Tracer(Name).Start(ctx, name, opts...)
}

// noopSpan is boxed once: handing it back allocates nothing.
var noopSpan trace.Span = noop.Span{}

// Fail marks span as failed with err (a nil err leaves it alone).
func Fail(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
}

// Parent is the W3C traceparent of ctx's span, "" when ctx has none: what a
// record written in ctx keeps so that work it causes later, elsewhere,
// joins the same trace (an outbox event and its webhook deliveries).
func Parent(ctx context.Context) string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ""
	}
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	return c[traceparent]
}

// FromParent is ctx carrying the remote span of a W3C traceparent as its
// parent (ctx when parent is "" or malformed).
func FromParent(ctx context.Context, parent string) context.Context {
	if parent == "" {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{traceparent: parent})
}

const traceparent = "traceparent"
