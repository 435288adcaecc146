package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"text/tabwriter"
	"time"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/tenant"
	"github.com/fideliza/fideliza/viewer"
)

// The dashboards load (issue 38): the tenant grows to a base number of
// sales spread over the last year, each dashboard field is asked over 30
// and 365 days one request at a time through /graphql, then the tenant
// grows to the large number and the fields are asked again.

// dashboardFields are the GraphQL queries measured, each over a period.
var dashboardFields = []struct{ name, query string }{
	{"salesByStoreDay", `query($from: Time!, $to: Time!) { salesByStoreDay(from: $from, to: $to) { day sales amount discountAmount amountPayable store { code } } }`},
	{"activeCustomers", `query($from: Time!, $to: Time!) { activeCustomers(from: $from, to: $to) }`},
	{"pointsLiabilityByDay", `query($from: Time!, $to: Time!) { pointsLiabilityByDay(from: $from, to: $to) { day points } }`},
	{"pointsSpentByStoreDay", `query($from: Time!, $to: Time!) { pointsSpentByStoreDay(from: $from, to: $to) { day sales points amount store { code } } }`},
	{"Campaign.performance", `query($from: Time!, $to: Time!) { campaigns(first: 10, orderBy: {field: CREATED_AT, direction: ASC}) {
		edges { node { name performance(from: $from, to: $to) { redemptions discountGiven cashbackPromised revenue } } } } }`},
}

// dashboardPeriods are the periods asked, in days ending tonight.
var dashboardPeriods = []int{30, 365}

// dashReport is what the dashboards load measured at each size.
type dashReport struct {
	Dialect string              `json:"dialect"`
	Sizes   []int               `json:"sizes"`
	Results map[string][]result `json:"results"` // by "field days", one per size
	Targets []target            `json:"targets"`
}

// dashboards seeds the tenant (or, with --dashboards-reuse, takes the one
// an earlier run grew), grows its sales to each size, measuring the
// dashboard fields at each.
func dashboards(ctx context.Context, a *app.App, o options, progress func(string, ...any)) error {
	db := a.DB
	rep := dashReport{Dialect: db.Dialect, Results: map[string][]result{}}
	if o.dashCompare != "" {
		if err := rep.compareWith(o.dashCompare); err != nil {
			return err
		}
	}
	var tenantID string
	if o.dashReuse {
		t, err := db.Ent.Tenant.Query().Where(tenant.Name(benchTenantName)).Order(ent.Desc(tenant.FieldCreatedAt)).First(viewer.SystemContext(ctx))
		if err != nil {
			return fmt.Errorf("no tenant to reuse: %w", err)
		}
		tenantID = t.ID
	} else {
		progress("generating %d customers and %d campaigns on %s", o.customers, pdvCampaigns+onlineCampaigns, db.Dialect)
		f, err := seed(ctx, a, o.customers, o.pointsSpend)
		if err != nil {
			return err
		}
		tenantID = f.TenantID
	}
	g, err := newSalesGrowth(ctx, db, tenantID)
	if err != nil {
		return err
	}
	var l *loads
	var browser *insightsBrowser
	if !o.dashGrowOnly {
		chromiumPath, err := chromium()
		if err != nil {
			return err
		}
		addr, stopServer, _, err := startChild(ctx, "server", []string{"FIDELIZA_DATABASE_URL=" + o.databaseURL, "FIDELIZA_WORKERS=1"})
		if err != nil {
			return err
		}
		defer stopServer()
		// The dashboards are the back office's: an analyst's token, as the
		// insights page holds.
		l = newLoads([]string{"http://" + addr}, &fixture{TenantID: tenantID}, 1)
		if l.token, err = auth.NewService(db.Ent, benchIssuer, "fideliza").IssueUserToken(viewer.SystemContext(ctx), tenantID, viewer.RoleAnalyst, "bench", 12*time.Hour); err != nil {
			return err
		}
		browser = openInsights(ctx, chromiumPath, l.base(), l.token)
		defer browser.stop()
	}
	for _, size := range []int{o.dashBase, o.dashSales} {
		if size == 0 || size < g.sales {
			continue // a reused tenant already past this size
		}
		if size > g.sales { // a reused tenant at this size was grown and analysed by its run
			progress("growing from %d to %d sales", g.sales, size)
			started, from := time.Now(), g.sales
			if err := g.growTo(ctx, size); err != nil {
				return err
			}
			grown := time.Since(started)
			if err := analyze(ctx, db); err != nil {
				return err
			}
			progress("grown in %s (%.0f sales/s), analysed in %s", grown.Round(time.Second),
				float64(size-from)/max(grown.Seconds(), 0.001), (time.Since(started) - grown).Round(time.Second))
		}
		if o.dashGrowOnly {
			continue
		}
		progress("measuring the dashboards")
		rep.Sizes = append(rep.Sizes, size)
		for _, fd := range dashboardFields {
			for _, days := range dashboardPeriods {
				name := fmt.Sprintf("%s %dd", fd.name, days)
				r := run(ctx, name, 1, o.duration, 0, l.dashboard(fd.query, days))
				r.Name = fmt.Sprintf("%s at %d", name, size)
				rep.Results[name] = append(rep.Results[name], r)
			}
		}
		progress("timing the insights page in headless Chromium")
		whole, served := browser.measure(ctx, size)
		rep.Results[insightsRow] = append(rep.Results[insightsRow], whole)
		rep.Results[insightsServedRow] = append(rep.Results[insightsServedRow], served)
	}
	if o.dashGrowOnly {
		return nil
	}
	rep.Targets = append(rep.targets(), rep.insightsTarget()...)
	return output(o, rep, rep.print)
}

// compareWith takes an earlier run's figures at its first size as the
// first size of this one.
func (r *dashReport) compareWith(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var earlier dashReport
	if err := json.Unmarshal(b, &earlier); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if len(earlier.Sizes) == 0 || earlier.Dialect != r.Dialect {
		return fmt.Errorf("%s: no %s figures", path, r.Dialect)
	}
	r.Sizes = earlier.Sizes[:1]
	for name, rs := range earlier.Results {
		r.Results[name] = rs[:1]
	}
	return nil
}

// dashboard asks a dashboard query over the days ending at the next
// midnight in the tenant's time zone (the demo's, São Paulo), as the
// insights page does.
func (l *loads) dashboard(query string, days int) op {
	loc, _ := time.LoadLocation("America/Sao_Paulo")
	y, m, d := time.Now().In(loc).Date()
	to := time.Date(y, m, d+1, 0, 0, 0, 0, loc)
	body := map[string]any{"query": query, "variables": map[string]any{
		"from": to.AddDate(0, 0, -days).Format(time.RFC3339), "to": to.Format(time.RFC3339)}}
	return func(ctx context.Context) (time.Duration, error) {
		var out struct {
			Errors []json.RawMessage `json:"errors"`
		}
		took, err := call(ctx, l.hc, http.MethodPost, l.base()+"/graphql", body, l.bearer, http.StatusOK, &out)
		if err == nil && len(out.Errors) > 0 {
			err = fmt.Errorf("graphql: %s", out.Errors[0])
		}
		return took, err
	}
}

func (r dashReport) print(w io.Writer) {
	fmt.Fprintf(w, "\ndashboards on %s, one request at a time, sales %v\n\n", r.Dialect, r.Sizes)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "field\trequests\terrors\tp50 ms\tp99 ms\t")
	for _, name := range append(r.names(), insightsRow, insightsServedRow) {
		for _, x := range r.Results[name] {
			if x.Requests == 0 {
				fmt.Fprintf(tw, "%s\t0\t%d\tno answer within the load\t\t\n", x.Name, x.Errors)
				continue
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f\t%.1f\t\n", x.Name, x.Requests, x.Errors, ms(x.P50), ms(x.P99))
		}
	}
	tw.Flush()
	fmt.Fprintf(w, "\ntargets:\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  row\tmeasured\ttarget\tmet")
	for _, t := range r.Targets {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", t.Row, t.Measured, t.Target, map[bool]string{true: "yes", false: "no"}[t.Met])
	}
	tw.Flush()
	for _, name := range append(r.names(), insightsRow, insightsServedRow) {
		for _, x := range r.Results[name] {
			if x.FirstError != "" {
				fmt.Fprintf(w, "first error of %s: %s\n", x.Name, x.FirstError)
			}
		}
	}
}

// names are the measured fields and periods in the order of the table
// (the insights page comes after them).
func (r dashReport) names() []string {
	var out []string
	for _, fd := range dashboardFields {
		for _, days := range dashboardPeriods {
			out = append(out, fmt.Sprintf("%s %dd", fd.name, days))
		}
	}
	return out
}

// targets: every field's p50 at most 200 ms at the large size, and at most
// 1.5 times its p50 at the base size.
func (r dashReport) targets() []target {
	var ts []target
	for _, name := range r.names() {
		rs := r.Results[name]
		if len(rs) != 2 {
			continue
		}
		small, large := rs[0], rs[1]
		growth := ms(large.P50) / max(ms(small.P50), 0.001)
		ts = append(ts, target{Row: fmt.Sprintf("%s p50 at %d sales", name, r.Sizes[1]), Ratio: ms(large.P50) / 200,
			Measured: fmt.Sprintf("%.1f ms", ms(large.P50)), Target: "≤ 200 ms",
			Met: large.Requests > 0 && large.Errors == 0 && large.P50 <= 200*time.Millisecond})
		ts = append(ts, target{Row: fmt.Sprintf("%s p50, %d → %d sales", name, r.Sizes[0], r.Sizes[1]), Ratio: growth,
			Measured: fmt.Sprintf("%.1f → %.1f ms (×%.2f)", ms(small.P50), ms(large.P50), growth), Target: "≤ ×1.5",
			Met: large.Requests > 0 && large.Errors == 0 && growth <= 1.5})
	}
	return ts
}
