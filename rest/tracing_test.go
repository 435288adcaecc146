package rest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/fideliza/fideliza/app/webhooks"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/domain/webhook"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/tracing"
	"github.com/fideliza/fideliza/worker"
)

// TestSaleTrace follows one sale with tracing on (an SDK provider over an
// in-memory exporter): the POS request, its commit in a group, its River
// job in another goroutine (the job's metadata carries the trace), the
// ledger's writes, and the webhook delivery of its sale.processed event,
// whose request carries the trace to the receiver. It is one trace, and
// the access log's line of the request names it. Not parallel: tracing is
// on for the whole process while it runs.
func TestSaleTrace(t *testing.T) {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	t.Cleanup(tracing.Use(tp)) // after the subtests, with their databases opened traced
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db)
		e.app.WebhookGuard = webhook.Guard{AllowLoopback: true}
		var mu sync.Mutex
		var received []http.Header
		rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			received = append(received, r.Header.Clone())
			mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
		}))
		t.Cleanup(rcv.Close)
		url, active := rcv.URL+"/hooks", true
		_, err := e.app.Webhooks.CreateWebhookEndpoint(e.posTenantCtx(), webhooks.WebhookInput{
			URL: &url, EventTypes: []string{outbox.SaleProcessed}, Active: &active})
		require.NoError(t, err)

		rc, err := worker.NewClient(e.app, worker.Config{Work: true, MaxWorkers: 2,
			PollInterval: 50 * time.Millisecond, DispatchInterval: 100 * time.Millisecond})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		require.NoError(t, rc.Start(ctx))
		t.Cleanup(func() {
			cancel()
			_ = rc.Stop(context.Background())
		})

		doc := posCPF()
		e.posCustomer(t, doc, posCust{name: "Ana Souza"})
		cust := map[string]any{"id": doc, "type": "CPF"}
		posRequireAccepted(t, e.posPost(t, "/sales", posSaleBody(posN("777"), cust)), "777", cust)

		// The sale's trace is the one of its request's server span.
		const route = "POST /api/v1/tenants/{tenantId}/sales"
		var server sdktrace.ReadOnlySpan
		for _, s := range spans.GetSpans().Snapshots() {
			if s.Name() == route {
				server = s
			}
		}
		require.NotNil(t, server, "a server span named after the route")
		require.Equal(t, trace.SpanKindServer, server.SpanKind())
		id := server.SpanContext().TraceID()

		deliver := "river.work/" + jobs.DeliverWebhook{}.Kind()
		var tree []sdktrace.ReadOnlySpan
		require.Eventually(t, func() bool { // the delivery's span ends after its job
			tree = nil
			for _, s := range spans.GetSpans().Snapshots() {
				if s.SpanContext().TraceID() == id {
					tree = append(tree, s)
				}
			}
			return one(tree, deliver) != nil
		}, 30*time.Second, 20*time.Millisecond, "the webhook delivery joins the sale's trace")

		// child is the span of the trace named name, checked to be a child
		// of parent.
		child := func(parent sdktrace.ReadOnlySpan, name string) sdktrace.ReadOnlySpan {
			t.Helper()
			s := one(tree, name)
			require.NotNil(t, s, "span %s in the sale's trace; have %v", name, names(tree))
			require.Equal(t, parent.SpanContext().SpanID(), s.Parent().SpanID(), "%s's parent is %s", name, parent.Name())
			return s
		}
		commit := child(server, "pos.sale.commit")
		group := child(commit, "pos.sale.write_group")
		insert := child(group, "river.insert_many")
		require.Equal(t, trace.SpanKindProducer, insert.SpanKind())
		work := child(commit, "river.work/"+jobs.ProcessSale{}.Kind())
		require.Equal(t, trace.SpanKindConsumer, work.SpanKind())
		delivery := child(work, deliver)
		require.Equal(t, trace.SpanKindConsumer, delivery.SpanKind())

		// The database's spans: the group's writes, the ledger's.
		queries := func(parent sdktrace.ReadOnlySpan) string {
			var out []string
			for _, s := range tree {
				if s.Parent().SpanID() == parent.SpanContext().SpanID() && strings.HasPrefix(s.Name(), "sql.") {
					for _, a := range s.Attributes() {
						if a.Key == "db.query.text" {
							out = append(out, a.Value.AsString())
						}
					}
				}
			}
			return strings.Join(out, "\n")
		}
		require.Contains(t, queries(group), "INSERT INTO", "the sale's rows")
		require.Contains(t, queries(work), "points_entries", "the ledger's entries")

		// The delivery's request is a client span that carried the trace.
		var client sdktrace.ReadOnlySpan
		for _, s := range tree {
			if s.SpanKind() == trace.SpanKindClient && s.Parent().SpanID() == delivery.SpanContext().SpanID() {
				client = s
			}
		}
		require.NotNil(t, client, "the delivery's HTTP request, under its job; have %v", names(tree))
		mu.Lock()
		require.Len(t, received, 1)
		require.Contains(t, received[0].Get("Traceparent"), id.String())
		mu.Unlock()

		// Log lines in a span name it.
		require.Contains(t, e.logs.String(), `"trace_id":"`+id.String()+`"`)
	})
}

// one is the span of spans named name (nil when none).
func one(spans []sdktrace.ReadOnlySpan, name string) sdktrace.ReadOnlySpan {
	for _, s := range spans {
		if s.Name() == name {
			return s
		}
	}
	return nil
}

func names(spans []sdktrace.ReadOnlySpan) []string {
	out := make([]string, len(spans))
	for i, s := range spans {
		out[i] = s.Name()
	}
	return out
}
