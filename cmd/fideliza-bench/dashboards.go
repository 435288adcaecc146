package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/campaign"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/sale"
	"github.com/fideliza/fideliza/ent/schema/viewer"
	"github.com/fideliza/fideliza/ent/store"
	"github.com/fideliza/fideliza/storage"
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

// dashboards grows the tenant's sales to each size, measuring the
// dashboard fields at each.
func dashboards(ctx context.Context, db *storage.DB, f *fixture, l *loads, o options, progress func(string, ...any)) error {
	rep := dashReport{Dialect: db.Dialect, Results: map[string][]result{}}
	// The dashboards are the back office's: an analyst's token, as the
	// insights page holds.
	tok, err := auth.NewService(db.Ent, benchIssuer, "fideliza").IssueUserToken(viewer.SystemContext(ctx), f.TenantID, viewer.RoleAnalyst, "bench", 12*time.Hour)
	if err != nil {
		return err
	}
	l.token = tok
	g, err := newSalesGrowth(ctx, db, f)
	if err != nil {
		return err
	}
	for _, size := range []int{o.dashBase, o.dashSales} {
		progress("growing to %d sales", size)
		started := time.Now()
		if err := g.growTo(ctx, size); err != nil {
			return err
		}
		if err := analyze(ctx, db); err != nil {
			return err
		}
		progress("grown in %s; measuring the dashboards", time.Since(started).Round(time.Second))
		rep.Sizes = append(rep.Sizes, size)
		for _, fd := range dashboardFields {
			for _, days := range dashboardPeriods {
				name := fmt.Sprintf("%s %dd", fd.name, days)
				r := run(ctx, name, 1, o.duration, 0, l.dashboard(fd.query, days))
				r.Name = fmt.Sprintf("%s at %d", name, size)
				rep.Results[name] = append(rep.Results[name], r)
			}
		}
	}
	rep.Targets = rep.targets()
	return output(o, rep, rep.print)
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
	for _, name := range r.names() {
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
	for _, name := range r.names() {
		for _, x := range r.Results[name] {
			if x.FirstError != "" {
				fmt.Fprintf(w, "first error of %s: %s\n", x.Name, x.FirstError)
			}
		}
	}
}

// names are the measured fields and periods in the order of the table.
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

// salesGrowth adds processed sales to the tenant in bulk, spread over the
// last 365 days in one store, most with a customer: each with its points
// credited, and one in 20 with a redemption of a campaign.
type salesGrowth struct {
	db        *storage.DB
	tenantID  string
	storeID   string
	campaigns []string
	customers []string
	rng       *rand.Rand
	sales     int
	now       time.Time
}

// salesBatch is how many sales a transaction adds; SQLite bounds a
// statement's variables, so each statement adds 500 rows.
const salesBatch = 5000

func newSalesGrowth(ctx context.Context, db *storage.DB, f *fixture) (*salesGrowth, error) {
	tctx := viewer.TenantContext(ctx, f.TenantID)
	st, err := db.Ent.Store.Query().Where(store.Code(benchStore)).Only(tctx)
	if err != nil {
		return nil, err
	}
	cs, err := db.Ent.Campaign.Query().Where(campaign.TypeEQ(campaign.TypeDiscount)).
		Order(ent.Asc(campaign.FieldCreatedAt), ent.Asc(campaign.FieldID)).Limit(10).IDs(tctx)
	if err != nil {
		return nil, err
	}
	customers, err := db.Ent.Customer.Query().IDs(tctx)
	if err != nil {
		return nil, err
	}
	n, err := db.Ent.Sale.Query().Where(sale.ExternalIDHasPrefix("B")).Count(tctx)
	if err != nil {
		return nil, err
	}
	slices.Sort(customers)
	return &salesGrowth{db: db, tenantID: f.TenantID, storeID: st.ID, campaigns: cs, customers: customers,
		rng: rand.New(rand.NewPCG(38, 38)), sales: n, now: time.Now()}, nil
}

// growTo adds sales until the tenant has n of the growth's.
func (g *salesGrowth) growTo(ctx context.Context, n int) error {
	tctx := viewer.TenantContext(ctx, g.tenantID)
	for g.sales < n {
		size := min(salesBatch, n-g.sales)
		err := g.db.InTx(tctx, func(tx storage.Tx) error {
			var sales []*ent.SaleCreate
			var entries []*ent.PointsEntryCreate
			var reds []*ent.RedemptionCreate
			for j := range size {
				i := g.sales + j
				ref := fmt.Sprintf("B%d", i)
				at := g.now.Add(-time.Duration(g.rng.Int64N(int64(365 * 24 * time.Hour))))
				amount := decimal.New(500+g.rng.Int64N(50000), -2)
				s := tx.Ent.Sale.Create().SetTenantID(g.tenantID).SetStoreID(g.storeID).SetExternalID(ref).SetSoldAt(at).
					SetAmount(amount).SetDiscountAmount(decimal.Zero).SetAmountPayable(amount).SetStatus(sale.StatusPROCESSED)
				if i%5 != 0 {
					cust := g.customers[g.rng.IntN(len(g.customers))]
					s.SetCustomerID(cust)
					entries = append(entries, tx.Ent.PointsEntry.Create().SetTenantID(g.tenantID).SetCustomerID(cust).SetCreatedAt(at).
						SetKind(pointsentry.KindCredit).SetSourceKind(pointsentry.SourceKindSale).SetSourceID(ref).
						SetPoints(amount.IntPart()).SetBalanceAfter(amount.IntPart()))
					if i%20 == 1 && len(g.campaigns) > 0 {
						discount := decimal.New(500, -2)
						reds = append(reds, tx.Ent.Redemption.Create().SetTenantID(g.tenantID).SetCampaignID(g.campaigns[i%len(g.campaigns)]).
							SetCustomerID(cust).SetOrderID(ref).SetCreatedAt(at).SetAmountPaid(amount.Sub(discount)).
							SetDiscountAmount(discount).SetCashbackAmount(decimal.Zero).SetBenefit(json.RawMessage(`{"type":"discount"}`)))
					}
				}
				sales = append(sales, s)
			}
			for chunk := range slices.Chunk(sales, 500) {
				if err := tx.Ent.Sale.CreateBulk(chunk...).Exec(tctx); err != nil {
					return err
				}
			}
			for chunk := range slices.Chunk(entries, 500) {
				if err := tx.Ent.PointsEntry.CreateBulk(chunk...).Exec(tctx); err != nil {
					return err
				}
			}
			for chunk := range slices.Chunk(reds, 500) {
				if err := tx.Ent.Redemption.CreateBulk(chunk...).Exec(tctx); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("adding sales: %w", err)
		}
		g.sales += size
	}
	return nil
}
