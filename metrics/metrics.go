// Package metrics holds the Prometheus series of the service (docs/metrics.md
// lists them): HTTP requests per route and status, River jobs per kind, and
// the business counters. The operations and the workers feed it through the
// small methods of Registry, which know nothing of HTTP; they take a nil
// *Registry as "not measured", so tests and commands that serve no /metrics
// need none.
package metrics

import (
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Namespace prefixes every series of the service.
const Namespace = "fideliza"

// Label values of the business counters.
const (
	// SaleProcessed and SaleFailed are the statuses of
	// fideliza_sales_processed_total.
	SaleProcessed = "processed"
	SaleFailed    = "failed"

	// SourceAPI, SourceSale, SourceCashback and SourceAdjustment say where
	// credited points and redemptions came from: an operation of the API
	// (REST or GraphQL: an order's credit, a redemption's bonus), the
	// processing of a POS sale, the cashback of a redemption, or an
	// operator's positive adjustment.
	SourceAPI        = "api"
	SourceSale       = "sale"
	SourceCashback   = "cashback"
	SourceAdjustment = "adjustment"

	// SourceReturn and SourceRedemption say where reversed points went
	// back from (with SourceAPI, an order's refund): a POS return or
	// cancellation, a redemption rolled back.
	SourceReturn     = "return"
	SourceRedemption = "redemption"

	// ReturnKindReturn and ReturnKindCancellation are the kinds of POS
	// returns.
	ReturnKindReturn       = "return"
	ReturnKindCancellation = "cancellation"
)

// Registry is the registry /metrics serves, with the series the service
// feeds. Its zero value is ready to use, and a nil *Registry measures
// nothing. It is its own prometheus.Registry, not the global default, so
// each App (and each test) has its own.
type Registry struct {
	once sync.Once
	reg  *prometheus.Registry

	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec

	jobDuration  *prometheus.HistogramVec
	jobQueueWait *prometheus.HistogramVec
	jobFailures  *prometheus.CounterVec
	jobKinds     sync.Map // kinds seen: their series start at zero
	queueOnce    sync.Once

	salesReceived  prometheus.Counter
	salesProcessed *prometheus.CounterVec
	pointsCredited *prometheus.CounterVec
	redemptions    *prometheus.CounterVec

	returnsReceived  *prometheus.CounterVec
	returnsProcessed *prometheus.CounterVec
	pointsReversed   *prometheus.CounterVec
}

// New returns a registry with the series of the service and the Go runtime
// and process collectors.
func New() *Registry {
	r := &Registry{}
	r.init()
	return r
}

// jobBuckets cover jobs from milliseconds to the longest timeouts.
var jobBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}

func (r *Registry) init() {
	r.once.Do(func() {
		r.reg = prometheus.NewRegistry()
		r.httpRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "http", Name: "requests_total",
			Help: "HTTP requests answered, by route pattern, method and status code.",
		}, []string{"route", "method", "status"})
		r.httpDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Subsystem: "http", Name: "request_duration_seconds",
			Help:    "Time to answer HTTP requests, by route pattern and method.",
			Buckets: prometheus.DefBuckets,
		}, []string{"route", "method"})
		r.jobDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Subsystem: "river", Name: "job_duration_seconds",
			Help:    "Time River jobs ran in this process, by kind and outcome (completed, failed, cancelled, snoozed).",
			Buckets: jobBuckets,
		}, []string{"kind", "outcome"})
		r.jobQueueWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Subsystem: "river", Name: "job_queue_wait_seconds",
			Help:    "Time River jobs waited between becoming available and starting, by kind.",
			Buckets: jobBuckets,
		}, []string{"kind"})
		r.jobFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Subsystem: "river", Name: "job_failures_total",
			Help: "River job attempts that failed (returned an error, timed out or panicked), by kind.",
		}, []string{"kind"})
		r.salesReceived = prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Name: "sales_received_total",
			Help: "POS sales registered (a receipt sent again is not counted again).",
		})
		r.salesProcessed = prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "sales_processed_total",
			Help: "POS sales whose processing ended, by status (processed, or failed after the last attempt).",
		}, []string{"status"})
		r.pointsCredited = prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "points_credited_total",
			Help: "Points credited to customers, by source (api, sale, cashback, adjustment).",
		}, []string{"source"})
		r.redemptions = prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "redemptions_total",
			Help: "Campaign redemptions recorded, by source (api, or sale for discounts a POS sale carried).",
		}, []string{"source"})
		r.returnsReceived = prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "sale_returns_received_total",
			Help: "POS returns and cancellations registered, by kind (a return sent again is not counted again).",
		}, []string{"kind"})
		r.returnsProcessed = prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "sale_returns_processed_total",
			Help: "POS returns and cancellations applied to their sale.",
		}, []string{"kind"})
		r.pointsReversed = prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "points_reversed_total",
			Help: "Points taken back from customers, by source (return, api for order refunds, redemption rollbacks).",
		}, []string{"source"})
		// The label values known in advance start at zero, so that rate()
		// and absence alerts work from the first scrape.
		for _, s := range []string{SaleProcessed, SaleFailed} {
			r.salesProcessed.WithLabelValues(s)
		}
		for _, s := range []string{SourceAPI, SourceSale, SourceCashback, SourceAdjustment} {
			r.pointsCredited.WithLabelValues(s)
		}
		for _, s := range []string{SourceAPI, SourceSale} {
			r.redemptions.WithLabelValues(s)
		}
		for _, k := range []string{ReturnKindReturn, ReturnKindCancellation} {
			r.returnsReceived.WithLabelValues(k)
			r.returnsProcessed.WithLabelValues(k)
		}
		for _, s := range []string{SourceReturn, SourceAPI, SourceRedemption} {
			r.pointsReversed.WithLabelValues(s)
		}
		r.reg.MustRegister(r.httpRequests, r.httpDuration, r.jobDuration, r.jobQueueWait, r.jobFailures,
			r.salesReceived, r.salesProcessed, r.pointsCredited, r.redemptions,
			r.returnsReceived, r.returnsProcessed, r.pointsReversed,
			collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	})
}

// Gatherer is what /metrics serves.
func (r *Registry) Gatherer() prometheus.Gatherer {
	r.init()
	return r.reg
}

// Handler serves the registry in the Prometheus text format. A collector
// that fails (the job counts when the database does not answer) is logged
// and left out; the other series are still served.
func (r *Registry) Handler(log *slog.Logger) http.Handler {
	r.init()
	opts := promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError, Registry: r.reg}
	if log != nil {
		opts.ErrorLog = slogPrinter{log}
	}
	return promhttp.HandlerFor(r.reg, opts)
}

type slogPrinter struct{ log *slog.Logger }

func (p slogPrinter) Println(v ...any) {
	p.log.Warn("metrics", "error", strings.TrimSpace(fmt.Sprintln(v...)))
}

// SaleReceived counts a POS sale registered for processing.
func (r *Registry) SaleReceived() {
	if r == nil {
		return
	}
	r.init()
	r.salesReceived.Inc()
}

// SaleProcessed counts a sale whose processing ended with status
// (SaleProcessed or SaleFailed).
func (r *Registry) SaleProcessed(status string) {
	if r == nil {
		return
	}
	r.init()
	r.salesProcessed.WithLabelValues(status).Inc()
}

// PointsCredited counts points credited from source.
func (r *Registry) PointsCredited(source string, points int64) {
	if r == nil || points <= 0 {
		return
	}
	r.init()
	r.pointsCredited.WithLabelValues(source).Add(float64(points))
}

// Redemptions counts n redemptions recorded from source.
func (r *Registry) Redemptions(source string, n int) {
	if r == nil || n <= 0 {
		return
	}
	r.init()
	r.redemptions.WithLabelValues(source).Add(float64(n))
}

// ReturnReceived counts a POS return or cancellation registered.
func (r *Registry) ReturnReceived(kind string) {
	if r == nil {
		return
	}
	r.init()
	r.returnsReceived.WithLabelValues(kind).Inc()
}

// ReturnsProcessed counts n returns of a kind applied.
func (r *Registry) ReturnsProcessed(kind string, n int) {
	if r == nil || n <= 0 {
		return
	}
	r.init()
	r.returnsProcessed.WithLabelValues(kind).Add(float64(n))
}

// PointsReversed counts points taken back from source.
func (r *Registry) PointsReversed(source string, points int64) {
	if r == nil || points <= 0 {
		return
	}
	r.init()
	r.pointsReversed.WithLabelValues(source).Add(float64(points))
}

// observeHTTP records one answered request.
func (r *Registry) observeHTTP(route, method string, status int, seconds float64) {
	r.httpRequests.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
	r.httpDuration.WithLabelValues(route, method).Observe(seconds)
}
