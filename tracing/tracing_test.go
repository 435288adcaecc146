package tracing

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// TestExporting reads the standard variables as Setup does: off unless
// asked for OTLP, over HTTP only.
func TestExporting(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		on   bool
		err  string
	}{
		{name: "nothing set", env: nil},
		{name: "an endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, on: true},
		{name: "a traces endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, on: true},
		{name: "otlp to the default endpoint", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, on: true},
		{name: "none beats an endpoint", env: map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}},
		{name: "the SDK disabled", env: map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}},
		{name: "an exporter not built in", env: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, err: `OTEL_TRACES_EXPORTER="zipkin"`},
		{name: "gRPC", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, err: "OTLP over HTTP only"},
		{name: "the traces' protocol first", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp",
			"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, on: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, name := range []string{"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT",
				"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"} {
				t.Setenv(name, tc.env[name])
			}
			on, err := exporting()
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.on, on)
		})
	}
}

// TestOffHandsBack: off, the transports get back what they gave.
func TestOffHandsBack(t *testing.T) {
	require.False(t, Enabled())
	require.Nil(t, RiverMiddleware())
	ctx, span := Start(context.Background(), "nothing")
	require.False(t, span.IsRecording())
	require.Equal(t, "", Parent(ctx))
	require.Nil(t, JobMetadata(ctx))
}

// TestLogHandler: a line logged in a span names it, one outside does not.
func TestLogHandler(t *testing.T) {
	restore := Use(sdktrace.NewTracerProvider())
	defer restore()
	var buf bytes.Buffer
	log := slog.New(LogHandler(slog.NewJSONHandler(&buf, nil))).With("k", "v")
	ctx, span := Start(context.Background(), "work")
	log.InfoContext(ctx, "in")
	span.End()
	sc := span.SpanContext()
	require.Contains(t, buf.String(), `"trace_id":"`+sc.TraceID().String()+`","span_id":"`+sc.SpanID().String()+`"`)
	require.Contains(t, buf.String(), `"k":"v"`)
	buf.Reset()
	log.InfoContext(context.Background(), "out")
	require.NotContains(t, buf.String(), "trace_id")
	require.Equal(t, `00-`+sc.TraceID().String()+`-`+sc.SpanID().String()+`-01`, Parent(ctx))
	require.JSONEq(t, `{"traceparent":"`+Parent(ctx)+`"}`, string(JobMetadata(ctx)))
}

// BenchmarkSaleOff is what tracing adds to a sale when it is off: the
// commit's and the group's spans, the job's metadata and the event's
// parent (the transports are not wrapped at all).
//
//	go test ./tracing -run '^$' -bench SaleOff
func BenchmarkSaleOff(b *testing.B) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		c, commit := Start(ctx, "pos.sale.commit")
		g, group := Start(c, "pos.sale.write_group")
		if group.IsRecording() {
			b.Fatal("recording while off")
		}
		if JobMetadata(c) != nil || Parent(g) != "" {
			b.Fatal("a trace while off")
		}
		Fail(group, nil)
		group.End()
		commit.End()
	}
}
