package panel

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/app"
	insightsctx "github.com/fideliza/fideliza/app/insights"
	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/domain/experiment"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/panel/chart"
)

// The insights page draws a tenant's dashboards over a period the user
// picks, from the operations the GraphQL dashboards call (the queries of
// dashboardclient), with the signed-in user's viewer: the same numbers as
// the API, amounts to the cent as its Money shows them, under the same
// rules.
const (
	defaultInsightDays = 90  // the period shown when none is picked
	maxInsightDays     = 365 // the dashboards refuse periods over 366 × 24 h
	maxCampaignsShown  = 10
	campaignsRead      = 100 // campaigns whose performance is read
)

// insights is the data of the insights page.
type insights struct {
	Path       string // the page's own path, the picker's action
	TimeZone   string
	From, To   string // the period's first and last days, YYYY-MM-DD
	Presets    []preset
	Sales      int
	Revenue    string
	Active     int
	Liability  string // points, written for people
	ActiveUnit string // "week" or "month"
	Charts     []chart.Chart
}

// preset is a link to a usual period.
type preset struct{ Label, From, To string }

func (p *panel) insights(w http.ResponseWriter, r *http.Request) {
	p.renderInsights(r.Context(), w, r, Base+"/insights")
}

func (p *panel) sandboxInsights(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	ctx, err := p.app.Backoffice.InSandbox(r.Context(), id)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	p.renderInsights(ctx, w, r, sandboxPath(id)+"/insights")
}

// renderInsights shows the insights of ctx's tenant (r's, or a sandbox's).
func (p *panel) renderInsights(ctx context.Context, w http.ResponseWriter, r *http.Request, path string) {
	one := 1
	tenants, err := p.app.Backoffice.TenantConnection(ctx, kernel.Page{First: &one}, nil, nil)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	if len(tenants.Edges) == 0 || tenants.Edges[0].Node == nil {
		p.fail(w, r, fmt.Errorf("the viewer's tenant is not readable"))
		return
	}
	tenant := tenants.Edges[0].Node
	loc, err := time.LoadLocation(tenant.TimeZone)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	today := p.app.Now().In(loc)
	data := page{Title: "Insights: " + tenant.Name}
	status := http.StatusOK
	first, last, msg := pickedPeriod(r, today)
	if msg != "" {
		status, data.Error = http.StatusUnprocessableEntity, msg
	}
	in := &insights{Path: path, TimeZone: tenant.TimeZone, From: first.Format(time.DateOnly), To: last.Format(time.DateOnly),
		Presets: presets(today)}
	if err := in.read(ctx, p.app, first, last); err != nil {
		p.fail(w, r, err)
		return
	}
	data.Insights = in
	p.render(w, r, status, "insights", data)
}

// pickedPeriod returns the first and last days of the period the query
// asks for, midnights in today's location, or the default period and why
// the one asked for cannot be shown.
func pickedPeriod(r *http.Request, today time.Time) (first, last time.Time, msg string) {
	last = midnight(today)
	first = last.AddDate(0, 0, 1-defaultInsightDays)
	q := r.URL.Query()
	if q.Get("from") == "" && q.Get("to") == "" {
		return first, last, ""
	}
	f, errF := time.ParseInLocation(time.DateOnly, q.Get("from"), today.Location())
	l, errL := time.ParseInLocation(time.DateOnly, q.Get("to"), today.Location())
	switch {
	case errF != nil || errL != nil:
		return first, last, "Pick both days of the period, as YYYY-MM-DD; the last 90 days are shown."
	case l.Before(f):
		return first, last, "The period ends before it starts; the last 90 days are shown."
	case f.AddDate(0, 0, maxInsightDays-1).Before(l):
		return first, last, fmt.Sprintf("The period is longer than %d days; the last 90 days are shown.", maxInsightDays)
	}
	return f, l, ""
}

// presets are the usual periods, ending today.
func presets(today time.Time) []preset {
	last := midnight(today)
	var out []preset
	for _, p := range []struct {
		label string
		days  int
	}{{"Last 7 days", 7}, {"Last 30 days", 30}, {"Last 90 days", 90}, {"Last 12 months", maxInsightDays}} {
		out = append(out, preset{p.label, last.AddDate(0, 0, 1-p.days).Format(time.DateOnly), last.Format(time.DateOnly)})
	}
	return out
}

// midnight is the start of t's day, in t's location.
func midnight(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, t.Location())
}

// read asks the dashboards for the days first to last and lays out the
// charts.
func (in *insights) read(ctx context.Context, a *app.App, first, last time.Time) error {
	from, to := first, last.AddDate(0, 0, 1)
	sales, err := a.Insights.SalesByStoreDay(ctx, from, to, in.TimeZone)
	if err != nil {
		return err
	}
	levels, err := a.Loyalty.ByLevel(ctx)
	if err != nil {
		return err
	}
	liability, err := a.Insights.PointsLiabilityByDay(ctx, from, to, in.TimeZone)
	if err != nil {
		return err
	}
	spent, err := a.Insights.PointsSpentByStoreDay(ctx, from, to, in.TimeZone)
	if err != nil {
		return err
	}
	if in.Active, err = a.Insights.ActiveCustomers(ctx, from, to); err != nil {
		return err
	}
	activeByPeriod, err := in.activeCustomers(ctx, a, from, to)
	if err != nil {
		return err
	}
	campaigns, err := readCampaigns(ctx, a, from, to)
	if err != nil {
		return err
	}

	byDay, byStore, revenue, sold := salesPoints(sales, first, last)
	in.Sales = sold
	in.Revenue = money(revenue)
	if n := len(liability); n > 0 {
		in.Liability = count(float64(liability[n-1].Points))
	}
	var levelPoints, liabilityPoints []chart.Point
	for _, l := range levels {
		levelPoints = append(levelPoints, countPoint(levelName(string(l.Level)), l.Customers, "customers"))
	}
	for _, d := range liability {
		liabilityPoints = append(liabilityPoints, countPoint(d.Day, int(d.Points), "points"))
	}
	in.Charts = []chart.Chart{
		chart.Columns("sales-by-day", "Sales by day (R$ paid, all stores)", byDay, compact),
		chart.Bars("sales-by-store", "Sales by store (R$ paid)", byStore),
		chart.Bars("customers-by-level", "Customers by level (today)", levelPoints),
		chart.Columns("active-customers", "Active customers by "+in.ActiveUnit, activeByPeriod, compact),
		chart.Line("points-liability", "Points outstanding at the end of each day", liabilityPoints, compact),
		chart.Columns("points-spent", "Points spent as money at the till by day (R$ paid with points, all stores)",
			pointsSpent(spent, first, last), compact),
		chart.Bars("campaigns", "Campaigns: what customers paid in orders that used them (R$)", campaignPoints(campaigns)),
		liftChart(campaigns),
	}
	return nil
}

// salesPoints sums the sales per day of [first, last], zero days included,
// and per store, and returns what was paid in all and how many sales.
func salesPoints(rows []*insightsctx.StoreDaySales, first, last time.Time) (byDay, byStore []chart.Point, total decimal.Decimal, sold int) {
	days := map[string]decimal.Decimal{}
	type storeSum struct {
		label string
		sum   decimal.Decimal
	}
	stores := map[string]*storeSum{}
	for _, r := range rows {
		paid := cents(r.AmountPayable)
		days[r.Day] = days[r.Day].Add(paid)
		s := stores[r.Store.Code]
		if s == nil {
			s = &storeSum{label: r.Store.Code + " · " + r.Store.Name}
			stores[r.Store.Code] = s
		}
		s.sum = s.sum.Add(paid)
		total = total.Add(paid)
		sold += r.Sales
	}
	for d := first; !d.After(last); d = d.AddDate(0, 0, 1) {
		day := d.Format(time.DateOnly)
		byDay = append(byDay, moneyPoint(day, days[day]))
	}
	codes := make([]string, 0, len(stores))
	for code := range stores {
		codes = append(codes, code)
	}
	slices.Sort(codes)
	for _, code := range codes {
		byStore = append(byStore, moneyPoint(stores[code].label, stores[code].sum))
	}
	return byDay, byStore, total, sold
}

// pointsSpent sums the R$ paid with points per day of [first, last], zero
// days included; each day says the points too.
func pointsSpent(rows []*insightsctx.StoreDayPointsSpent, first, last time.Time) []chart.Point {
	amounts, spent := map[string]decimal.Decimal{}, map[string]int{}
	for _, r := range rows {
		amounts[r.Day] = amounts[r.Day].Add(cents(r.Amount))
		spent[r.Day] += int(r.Points)
	}
	var out []chart.Point
	for d := first; !d.After(last); d = d.AddDate(0, 0, 1) {
		day := d.Format(time.DateOnly)
		pt := moneyPoint(day, amounts[day])
		pt.Text += " · " + count(float64(spent[day])) + " points"
		out = append(out, pt)
	}
	return out
}

// activeCustomers counts the active customers of each week of [from, to),
// or of each calendar month when the period is longer than nine weeks; the
// last one ends at to.
func (in *insights) activeCustomers(ctx context.Context, a *app.App, from, to time.Time) ([]chart.Point, error) {
	next := func(t time.Time) time.Time { return t.AddDate(0, 0, 7) }
	in.ActiveUnit = "week"
	if to.Sub(from) > 63*24*time.Hour {
		in.ActiveUnit = "month"
		next = func(t time.Time) time.Time {
			y, m, _ := t.Date()
			return time.Date(y, m+1, 1, 0, 0, 0, 0, t.Location())
		}
	}
	var out []chart.Point
	for start := from; start.Before(to); start = next(start) {
		end := next(start)
		if end.After(to) {
			end = to
		}
		active, err := a.Insights.ActiveCustomers(ctx, start, end)
		if err != nil {
			return nil, err
		}
		label := start.Format("2006-01")
		if in.ActiveUnit == "week" {
			label = start.Format(time.DateOnly)
		}
		out = append(out, countPoint(label, active, "customers"))
	}
	return out, nil
}

// campaignRead is a campaign of the first campaignsRead, with its
// performance in the period and its experiment's lift (nil without a
// holdout).
type campaignRead struct {
	campaign *ent.Campaign
	perf     *insightsctx.CampaignPerformance
	lift     *experiment.Lift
}

// readCampaigns reads the first campaignsRead campaigns (the campaigns
// connection's first page), their performance within [from, to) together,
// and each one's lift.
func readCampaigns(ctx context.Context, a *app.App, from, to time.Time) ([]campaignRead, error) {
	n := campaignsRead
	conn, err := a.Campaigns.CampaignConnection(ctx, kernel.Page{First: &n}, nil, nil)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(conn.Edges))
	for _, e := range conn.Edges {
		ids = append(ids, e.Node.ID)
	}
	perf, err := a.Insights.CampaignsPerformance(ctx, ids, &from, &to)
	if err != nil {
		return nil, err
	}
	out := make([]campaignRead, 0, len(conn.Edges))
	for _, e := range conn.Edges {
		lift, err := a.Insights.CampaignLift(ctx, e.Node)
		if err != nil {
			return nil, err
		}
		out = append(out, campaignRead{campaign: e.Node, perf: perf[e.Node.ID], lift: lift})
	}
	return out, nil
}

// campaignPoints lists the campaigns that brought the most in the period,
// with redemptions, by revenue.
func campaignPoints(campaigns []campaignRead) []chart.Point {
	var rows []campaignRead
	for _, c := range campaigns {
		if c.perf != nil && c.perf.Redemptions > 0 {
			rows = append(rows, c)
		}
	}
	slices.SortStableFunc(rows, func(a, b campaignRead) int { return cents(b.perf.Revenue).Cmp(cents(a.perf.Revenue)) })
	var out []chart.Point
	for _, r := range rows[:min(len(rows), maxCampaignsShown)] {
		pt := moneyPoint(r.campaign.Name, cents(r.perf.Revenue))
		pt.Text += fmt.Sprintf(" · %d redemptions · %s off", r.perf.Redemptions, money(cents(r.perf.DiscountGiven)))
		out = append(out, pt)
	}
	return out
}

// liftChart shows each campaign with a holdout (at most
// maxCampaignsShown) by its revenue per customer, treated then held out:
// the treated bar says the difference, its 95% interval and its verdict, and
// a note under the title says each campaign's verdict in a sentence.
func liftChart(campaigns []campaignRead) chart.Chart {
	var pts []chart.Point
	var notes []string
	for _, c := range campaigns {
		if c.lift == nil || len(pts) >= 2*maxCampaignsShown {
			continue
		}
		name, m := c.campaign.Name, c.lift.RevenuePerCustomer
		treated := moneyPoint(name+" · treated", cents(m.Treated))
		treated.Text += " · lift " + money(cents(m.Difference))
		if m.Low != nil && m.High != nil {
			treated.Text += " (95%: " + money(cents(*m.Low)) + " to " + money(cents(*m.High)) + ")"
		}
		treated.Text += " · " + verdictWords[c.lift.Verdict]
		heldOut := moneyPoint(fmt.Sprintf("%s · held out (%g%%)", name, float64(c.campaign.HoldoutBasisPoints)/100), cents(m.HeldOut))
		pts = append(pts, treated, heldOut)
		notes = append(notes, name+": "+c.lift.Summary())
	}
	c := chart.Bars("campaign-lift", "Experiments: revenue per customer, treated and held out, over each campaign's period (R$)", pts)
	c.Notes = notes
	return c
}

// verdictWords is each verdict of a lift in a few words, for a bar.
var verdictWords = map[experiment.Verdict]string{
	experiment.NoBenefit:      "nothing given",
	experiment.TooFew:         "too few customers",
	experiment.NotSignificant: "not significant",
	experiment.Increased:      "significant increase",
	experiment.Decreased:      "significant decrease",
}

// cents rounds an amount in R$ to the cent, half away from zero, as the
// API's Money shows it (graph/scalar): the page sums and shows what the API
// answers.
func cents(d decimal.Decimal) decimal.Decimal { return d.Round(2) }

// moneyPoint is a point of an amount in R$; the float only places it.
func moneyPoint(label string, d decimal.Decimal) chart.Point {
	return chart.Point{Label: label, Value: d.InexactFloat64(), Text: money(d), Exact: d.String()}
}

func countPoint(label string, n int, unit string) chart.Point {
	return chart.Point{Label: label, Value: float64(n), Text: count(float64(n)) + " " + unit, Exact: strconv.Itoa(n)}
}

// levelName writes a level (BRONZE) as people read it (Bronze).
func levelName(level string) string {
	return strings.ToUpper(level[:1]) + strings.ToLower(level[1:])
}

// money writes an amount as R$ 1,234.56.
func money(d decimal.Decimal) string {
	whole, cents, _ := strings.Cut(d.StringFixed(2), ".")
	sign := ""
	if w, ok := strings.CutPrefix(whole, "-"); ok {
		sign, whole = "-", w
	}
	return sign + "R$ " + thousands(whole) + "." + cents
}

// count writes a whole number with thousands separators.
func count(f float64) string {
	s := strconv.FormatFloat(f, 'f', 0, 64)
	if rest, ok := strings.CutPrefix(s, "-"); ok {
		return "-" + thousands(rest)
	}
	return thousands(s)
}

func thousands(digits string) string {
	var b strings.Builder
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// compact writes an axis value short: 950, 1.5k, 2M.
func compact(f float64) string {
	for _, u := range []struct {
		size   float64
		suffix string
	}{{1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if f >= u.size {
			return short(f/u.size) + u.suffix
		}
	}
	return short(f)
}

// short writes f with two decimals at most.
func short(f float64) string {
	return strconv.FormatFloat(math.Round(f*100)/100, 'f', -1, 64)
}
