package metrics_test

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"

	"github.com/fideliza/fideliza/metrics"
)

func TestMetricsNilAndZeroRegistry(t *testing.T) {
	var nilReg *metrics.Registry
	// A nil registry counts nothing and does not panic.
	nilReg.SaleReceived()
	nilReg.SaleProcessed(metrics.SaleProcessed)
	nilReg.PointsCredited(metrics.SourceAPI, 10)
	nilReg.Redemptions(metrics.SourceSale, 1)
	nilReg.JobKinds("x")
	nilReg.WatchQueue(nil)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	require.NotNil(t, nilReg.HTTP(h))

	// The zero value is usable.
	var zero metrics.Registry
	zero.SaleReceived()
	zero.PointsCredited(metrics.SourceSale, 7)
	zero.PointsCredited(metrics.SourceSale, 0) // nothing
	n, err := testutil.GatherAndCount(zero.Gatherer(), "fideliza_sales_received_total", "fideliza_points_credited_total")
	require.NoError(t, err)
	require.Equal(t, 1+4, n, "the received counter and the four sources")
	require.NoError(t, testutil.GatherAndCompare(zero.Gatherer(), strings.NewReader(`
# HELP fideliza_sales_received_total POS sales registered (a receipt sent again is not counted again).
# TYPE fideliza_sales_received_total counter
fideliza_sales_received_total 1
`), "fideliza_sales_received_total"))
}

func TestMetricsHTTPRoutes(t *testing.T) {
	reg := metrics.New()
	r := chi.NewRouter()
	r.Use(reg.HTTP)
	r.Get("/items/{id}", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	r.Route("/t/{tenant}", func(r chi.Router) {
		r.Post("/sales", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })
	})
	for _, req := range []*http.Request{
		httptest.NewRequest(http.MethodGet, "/items/1", nil),
		httptest.NewRequest(http.MethodGet, "/items/2", nil),
		httptest.NewRequest(http.MethodPost, "/t/abc/sales", nil),
		httptest.NewRequest(http.MethodGet, "/nothing/here", nil),
		httptest.NewRequest("BREW", "/items/3", nil),
	} {
		r.ServeHTTP(httptest.NewRecorder(), req)
	}
	require.NoError(t, testutil.GatherAndCompare(reg.Gatherer(), strings.NewReader(`
# HELP fideliza_http_requests_total HTTP requests answered, by route pattern, method and status code.
# TYPE fideliza_http_requests_total counter
fideliza_http_requests_total{method="GET",route="/items/{id}",status="418"} 2
fideliza_http_requests_total{method="GET",route="unmatched",status="404"} 1
fideliza_http_requests_total{method="OTHER",route="unmatched",status="405"} 1
fideliza_http_requests_total{method="POST",route="/t/{tenant}/sales",status="200"} 1
`), "fideliza_http_requests_total"))
}

func TestMetricsRiverMiddleware(t *testing.T) {
	reg := metrics.New()
	reg.JobKinds("quiet")
	mw := reg.RiverMiddleware()
	now := time.Now()
	attempted := now.Add(3 * time.Second)
	job := &rivertype.JobRow{Kind: "k", ScheduledAt: now, AttemptedAt: &attempted}
	run := func(err error) error {
		return mw.Work(context.Background(), job, func(context.Context) error { return err })
	}
	require.NoError(t, run(nil))
	require.Error(t, run(errors.New("boom")))
	require.Error(t, run(rivertype.JobCancel(errors.New("stop"))))
	require.Error(t, run(&rivertype.JobSnoozeError{Duration: time.Minute}))
	require.PanicsWithValue(t, "bad", func() {
		_ = mw.Work(context.Background(), job, func(context.Context) error { panic("bad") })
	})
	require.NoError(t, testutil.GatherAndCompare(reg.Gatherer(), strings.NewReader(`
# HELP fideliza_river_job_failures_total River job attempts that failed (returned an error, timed out or panicked), by kind.
# TYPE fideliza_river_job_failures_total counter
fideliza_river_job_failures_total{kind="k"} 2
fideliza_river_job_failures_total{kind="quiet"} 0
`), "fideliza_river_job_failures_total"))
	count := func(outcome string) uint64 {
		fams, err := reg.Gatherer().Gather()
		require.NoError(t, err)
		for _, f := range fams {
			if f.GetName() != "fideliza_river_job_duration_seconds" {
				continue
			}
			for _, m := range f.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "outcome" && l.GetValue() == outcome {
						return m.GetHistogram().GetSampleCount()
					}
				}
			}
		}
		return 0
	}
	require.Equal(t, uint64(1), count(metrics.OutcomeCompleted))
	require.Equal(t, uint64(2), count(metrics.OutcomeFailed))
	require.Equal(t, uint64(1), count(metrics.OutcomeCancelled))
	require.Equal(t, uint64(1), count(metrics.OutcomeSnoozed))
	fams, err := reg.Gatherer().Gather()
	require.NoError(t, err)
	for _, f := range fams {
		if f.GetName() == "fideliza_river_job_queue_wait_seconds" {
			h := f.GetMetric()[0].GetHistogram()
			require.Equal(t, uint64(5), h.GetSampleCount())
			require.InDelta(t, 15, h.GetSampleSum(), 0.001, "3 s of wait for each of the 5 attempts")
		}
	}
}

func TestMetricsQueueDepth(t *testing.T) {
	db, err := sql.Open("sqlite", "file:"+t.TempDir()+"/q.db")
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	reg := metrics.New()
	reg.JobKinds("idle")
	reg.WatchQueue(db)
	reg.WatchQueue(db) // once only

	// Without river_job the series is left out and the rest still served.
	srv := httptest.NewServer(reg.Handler(nil))
	t.Cleanup(srv.Close)
	res, err := http.Get(srv.URL)
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.NotContains(t, string(body), "fideliza_river_jobs{")
	require.Contains(t, string(body), "fideliza_sales_received_total 0")

	_, err = db.Exec(`CREATE TABLE river_job (id INTEGER PRIMARY KEY, state TEXT NOT NULL, kind TEXT NOT NULL)`)
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO river_job (state, kind) VALUES ('available','a'), ('available','a'), ('running','a'),
		('completed','a'), ('scheduled','b'), ('discarded','c')`)
	require.NoError(t, err)
	require.NoError(t, testutil.GatherAndCompare(reg.Gatherer(), strings.NewReader(`
# HELP fideliza_river_jobs River jobs waiting or running (queue depth), by state (available, scheduled, retryable, running) and kind; counted from river_job at each scrape.
# TYPE fideliza_river_jobs gauge
fideliza_river_jobs{kind="a",state="available"} 2
fideliza_river_jobs{kind="a",state="retryable"} 0
fideliza_river_jobs{kind="a",state="running"} 1
fideliza_river_jobs{kind="a",state="scheduled"} 0
fideliza_river_jobs{kind="b",state="available"} 0
fideliza_river_jobs{kind="b",state="retryable"} 0
fideliza_river_jobs{kind="b",state="running"} 0
fideliza_river_jobs{kind="b",state="scheduled"} 1
fideliza_river_jobs{kind="idle",state="available"} 0
fideliza_river_jobs{kind="idle",state="retryable"} 0
fideliza_river_jobs{kind="idle",state="running"} 0
fideliza_river_jobs{kind="idle",state="scheduled"} 0
`), "fideliza_river_jobs"))
}
