package rest

import (
	"context"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/metrics"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/worker"
)

// documentedSeries is a series of docs/metrics.md.
type documentedSeries struct {
	name   string
	typ    dto.MetricType
	labels []string // sorted
}

// metricsDocumented reads the series table of docs/metrics.md.
func metricsDocumented(t *testing.T) map[string]documentedSeries {
	t.Helper()
	raw, err := os.ReadFile("../docs/metrics.md")
	require.NoError(t, err)
	row := regexp.MustCompile("^\\| `(fideliza_[a-z_]+)` \\| (counter|gauge|histogram) \\| *([^|]*?) *\\|")
	label := regexp.MustCompile("`([a-z_]+)`")
	types := map[string]dto.MetricType{"counter": dto.MetricType_COUNTER, "gauge": dto.MetricType_GAUGE,
		"histogram": dto.MetricType_HISTOGRAM}
	out := map[string]documentedSeries{}
	for _, line := range strings.Split(string(raw), "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		s := documentedSeries{name: m[1], typ: types[m[2]], labels: []string{}}
		for _, l := range label.FindAllStringSubmatch(m[3], -1) {
			s.labels = append(s.labels, l[1])
		}
		sort.Strings(s.labels)
		require.NotContains(t, out, s.name, "documented twice")
		out[s.name] = s
	}
	require.GreaterOrEqual(t, len(out), 10, "the series table of docs/metrics.md was not read")
	return out
}

// scrape gets /metrics and parses it.
func metricsScrape(t *testing.T, e *posEnv) map[string]*dto.MetricFamily {
	t.Helper()
	res, err := e.srv.Client().Get(e.srv.URL + "/metrics")
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode, "%s", body)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	require.NoError(t, err, "%s", body)
	return fams
}

// metricsFind returns the metric of family name with exactly labels, or nil.
func metricsFind(fams map[string]*dto.MetricFamily, name string, labels map[string]string) *dto.Metric {
	f := fams[name]
	if f == nil {
		return nil
	}
next:
	for _, m := range f.GetMetric() {
		if len(m.GetLabel()) != len(labels) {
			continue
		}
		for _, l := range m.GetLabel() {
			if v, ok := labels[l.GetName()]; !ok || v != l.GetValue() {
				continue next
			}
		}
		return m
	}
	return nil
}

// metricsValue is a counter's or gauge's value, or a histogram's count; -1
// when the series is absent.
func metricsValue(fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	m := metricsFind(fams, name, labels)
	switch {
	case m == nil:
		return -1
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	}
	return -1
}

type mLabels = map[string]string

// TestMetrics drives requests, a POS sale worked by River, a points credit
// and a failing job through a server, then scrapes /metrics: every series of
// docs/metrics.md is exported with its documented labels (and nothing
// undocumented is), with the values those calls give.
func TestMetrics(t *testing.T) {
	t.Parallel()
	documented := metricsDocumented(t)
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		reg := metrics.New() // one registry for the HTTP side, the operations and the jobs, as serve has
		e := posSetup(t, db, func(s *ServerSetup) { s.Metrics, s.Counts = reg, reg })
		rc := e.startWorkers(t, worker.Config{Work: true, MaxWorkers: 2, DispatchInterval: time.Hour, Metrics: reg})

		doc := posCPF()
		cust := e.posCustomer(t, doc, posCust{name: "Ana Souza"})
		camp := e.posPercent(t, "Dez por cento", "10", []string{"pdv"})
		oc, err := e.app.Backoffice.CreateClient(posSys(), e.tenantID, apiclient.KindOauth, "metrics", nil)
		require.NoError(t, err)
		tok, err := e.app.Auth.IssueToken(context.Background(), auth.TokenRequest{
			GrantType: "client_credentials", ClientID: oc.Client.ID, ClientSecret: oc.Secret,
			Scope: "customers:read loyalty:write"})
		require.NoError(t, err)

		call := func(method, path, token, body string) int {
			t.Helper()
			var rd io.Reader
			if body != "" {
				rd = strings.NewReader(body)
			}
			req, err := http.NewRequest(method, e.srv.URL+path, rd)
			require.NoError(t, err)
			if body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			res, err := e.srv.Client().Do(req)
			require.NoError(t, err)
			defer res.Body.Close()
			_, _ = io.Copy(io.Discard, res.Body)
			return res.StatusCode
		}
		require.Equal(t, http.StatusOK, call(http.MethodGet, "/healthz", "", ""))
		require.Equal(t, http.StatusUnauthorized, call(http.MethodGet, "/v1/customers", "", ""))
		require.Equal(t, http.StatusNotFound, call(http.MethodGet, "/v1/customers/cus_nobody", tok.AccessToken, ""))
		require.Equal(t, http.StatusNotFound, call(http.MethodGet, "/no/such/path/42", "", ""))
		credit := `{"customer_id":"` + cust.ID + `","order_id":"ord-metrics","points":50}`
		for range 2 { // the second answers the first result and credits nothing
			require.Equal(t, http.StatusCreated, call(http.MethodPost, "/v1/points/credit", tok.AccessToken, credit))
		}
		sale := posDiscounted(posSaleBody(posN("4242"), map[string]any{"id": doc, "type": "CPF"}), camp)
		for range 2 { // the same receipt again is received once
			posRequireAccepted(t, e.posPost(t, "/sales", sale), "4242", map[string]any{"id": doc, "type": "CPF"})
		}
		// A job that fails (its sale does not exist), and one scheduled later.
		ctx := context.Background()
		_, err = rc.Insert(ctx, jobs.ProcessSale{TenantID: e.tenantID, SaleID: "sal_missing"},
			&river.InsertOpts{MaxAttempts: 1})
		require.NoError(t, err)
		_, err = rc.Insert(ctx, jobs.PruneSigningKeys{}, &river.InsertOpts{ScheduledAt: time.Now().Add(time.Hour)})
		require.NoError(t, err)

		var fams map[string]*dto.MetricFamily
		require.Eventually(t, func() bool {
			fams = metricsScrape(t, e)
			return metricsValue(fams, "fideliza_river_job_duration_seconds", mLabels{"kind": "process_sale", "outcome": "completed"}) == 1 &&
				metricsValue(fams, "fideliza_river_job_duration_seconds", mLabels{"kind": "process_sale", "outcome": "failed"}) == 1 &&
				metricsValue(fams, "fideliza_river_jobs", mLabels{"state": "available", "kind": "process_sale"}) == 0 &&
				metricsValue(fams, "fideliza_river_jobs", mLabels{"state": "running", "kind": "process_sale"}) == 0
		}, 30*time.Second, 50*time.Millisecond, "the sale's job and the failing job were worked")

		t.Run("every documented series is exported with its labels", func(t *testing.T) {
			for _, s := range documented {
				f := fams[s.name]
				require.NotNil(t, f, "%s is documented but not exported", s.name)
				require.Equal(t, s.typ, f.GetType(), "%s", s.name)
				require.NotEmpty(t, f.GetMetric(), "%s", s.name)
				for _, m := range f.GetMetric() {
					var got []string
					for _, lp := range m.GetLabel() {
						got = append(got, lp.GetName())
					}
					sort.Strings(got)
					require.Equal(t, s.labels, append([]string{}, got...), "labels of %s", s.name)
				}
			}
			for name := range fams {
				if strings.HasPrefix(name, "fideliza_") {
					require.Contains(t, documented, name, "%s is exported but not in docs/metrics.md", name)
				}
			}
		})

		for _, c := range []struct {
			name   string
			labels mLabels
			want   float64 // counter or gauge value; a histogram's count
		}{
			{"fideliza_http_requests_total", mLabels{"route": "/healthz", "method": "GET", "status": "200"}, 1},
			{"fideliza_http_requests_total", mLabels{"route": "/v1/customers", "method": "GET", "status": "401"}, 1},
			{"fideliza_http_requests_total", mLabels{"route": "/v1/customers/{id}", "method": "GET", "status": "404"}, 1},
			{"fideliza_http_requests_total", mLabels{"route": "unmatched", "method": "GET", "status": "404"}, 1},
			{"fideliza_http_requests_total", mLabels{"route": "/v1/points/credit", "method": "POST", "status": "201"}, 2},
			{"fideliza_http_requests_total", mLabels{"route": "/api/v1/tenants/{tenantId}/sales", "method": "POST", "status": "202"}, 2},
			{"fideliza_http_request_duration_seconds", mLabels{"route": "/v1/customers/{id}", "method": "GET"}, 1},
			{"fideliza_http_request_duration_seconds", mLabels{"route": "/api/v1/tenants/{tenantId}/sales", "method": "POST"}, 2},
			{"fideliza_river_jobs", mLabels{"state": "scheduled", "kind": "prune_signing_keys"}, 1},
			{"fideliza_river_jobs", mLabels{"state": "retryable", "kind": "process_sale"}, 0},
			{"fideliza_river_jobs", mLabels{"state": "available", "kind": "deliver_webhook"}, 0},
			{"fideliza_river_job_duration_seconds", mLabels{"kind": "process_sale", "outcome": "completed"}, 1},
			{"fideliza_river_job_duration_seconds", mLabels{"kind": "process_sale", "outcome": "failed"}, 1},
			{"fideliza_river_job_queue_wait_seconds", mLabels{"kind": "process_sale"}, 2},
			{"fideliza_river_job_failures_total", mLabels{"kind": "process_sale"}, 1},
			{"fideliza_river_job_failures_total", mLabels{"kind": "credit_cashback"}, 0},
			{"fideliza_sales_received_total", mLabels{}, 1},
			{"fideliza_sales_processed_total", mLabels{"status": "processed"}, 1},
			{"fideliza_sales_processed_total", mLabels{"status": "failed"}, 0},
			{"fideliza_points_credited_total", mLabels{"source": "api"}, 50},
			{"fideliza_points_credited_total", mLabels{"source": "sale"}, 90}, // R$ 90.00 payable at 1 point per real
			{"fideliza_points_credited_total", mLabels{"source": "cashback"}, 0},
			{"fideliza_redemptions_total", mLabels{"source": "sale"}, 1},
			{"fideliza_redemptions_total", mLabels{"source": "api"}, 0},
		} {
			t.Run(c.name+labelString(c.labels), func(t *testing.T) {
				require.Contains(t, documented, c.name)
				got := metricsValue(fams, c.name, c.labels)
				require.Equal(t, c.want, got, "%s%s (-1: absent)", c.name, labelString(c.labels))
			})
		}
		t.Run("the route label is never a raw path", func(t *testing.T) {
			for _, m := range fams["fideliza_http_requests_total"].GetMetric() {
				for _, lp := range m.GetLabel() {
					if lp.GetName() == "route" {
						require.False(t, strings.Contains(lp.GetValue(), "cus_nobody") || strings.Contains(lp.GetValue(), e.tenantID) ||
							strings.Contains(lp.GetValue(), "/no/such"), "route %q", lp.GetValue())
					}
				}
			}
		})
	})
}

func labelString(ls map[string]string) string {
	keys := make([]string, 0, len(ls))
	for k := range ls {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString("{")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(k + "=" + ls[k])
	}
	b.WriteString("}")
	return b.String()
}
