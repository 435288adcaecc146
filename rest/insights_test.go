package rest_test

import (
	"bytes"
	"context"
	"html"
	"image/png"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"
	"github.com/chromedp/chromedp"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/dashboardclient"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// insightsPeriod is the period the insights tests pick around the seeded
// data (seedDashboard), as the picker sends it.
var insightsPeriod = url.Values{"from": {"2026-02-26"}, "to": {"2026-03-06"}}

// chartTables reads the data table of every chart of an insights page:
// chart id → rows of (label, exact value).
func chartTables(t *testing.T, page string) map[string][][2]string {
	t.Helper()
	out := map[string][][2]string{}
	sections := regexp.MustCompile(`(?s)<section class="chart" id="([a-z-]+)".*?</section>`).FindAllStringSubmatch(page, -1)
	require.Len(t, sections, 8, "the page draws eight charts")
	row := regexp.MustCompile(`<tr><th scope="row">([^<]*)</th><td data-value="([^"]*)">`)
	for _, s := range sections {
		rows := [][2]string{}
		for _, m := range row.FindAllStringSubmatch(s[0], -1) {
			rows = append(rows, [2]string{html.UnescapeString(m[1]), m[2]})
		}
		out[s[1]] = rows
	}
	return out
}

// TestPanelInsights checks that the insights page shows the API's numbers
// for the period picked, and how it answers a period it cannot show.
func TestPanelInsights(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		b := newBackOffice(t, db)
		seedDashboard(t, b)
		token := b.userToken(t, b.tenantID, viewer.RoleAnalyst)
		c := b.panelClient(t)
		c.signIn(t, token)
		gql := graphql.NewClient(b.srv.URL+"/graphql", httpClientWithBearer(token))
		ctx := context.Background()

		res := c.get(t, "/panel/insights?"+insightsPeriod.Encode())
		require.Equal(t, http.StatusOK, res.status, "%s", res.body)
		page := requirePanelPage(t, res)
		require.Contains(t, page, `value="2026-02-26"`)
		require.Contains(t, page, `value="2026-03-06"`)
		tables := chartTables(t, page)

		// The period in the tenant's time zone (São Paulo, UTC-3).
		from, to := dashTime(t, "2026-02-26T00:00:00-03:00"), dashTime(t, "2026-03-07T00:00:00-03:00")
		want := map[string][][2]string{}

		sales, err := dashboardclient.SalesByStoreDay(ctx, gql, from, to, nil)
		require.NoError(t, err)
		days, stores := map[string]decimal.Decimal{}, map[string]decimal.Decimal{}
		labels := map[string]string{}
		count := 0
		for _, s := range sales.SalesByStoreDay {
			days[s.Day] = days[s.Day].Add(s.AmountPayable)
			stores[s.Store.Code] = stores[s.Store.Code].Add(s.AmountPayable)
			labels[s.Store.Code] = s.Store.Code + " · " + s.Store.Name
			count += s.Sales
		}
		for day := from; day.Before(to); day = day.AddDate(0, 0, 1) {
			key := day.In(day.Location()).Format(time.DateOnly)
			want["sales-by-day"] = append(want["sales-by-day"], [2]string{key, days[key].String()})
		}
		for _, code := range []string{"LJ01", "LJ02"} {
			want["sales-by-store"] = append(want["sales-by-store"], [2]string{labels[code], stores[code].String()})
		}

		levels, err := dashboardclient.CustomersByLevel(ctx, gql)
		require.NoError(t, err)
		for _, l := range levels.CustomersByLevel {
			name := string(l.Level)
			want["customers-by-level"] = append(want["customers-by-level"],
				[2]string{strings.ToUpper(name[:1]) + name[1:], strconv.Itoa(l.Customers)})
		}

		for start := from; start.Before(to); start = start.AddDate(0, 0, 7) {
			end := start.AddDate(0, 0, 7)
			if end.After(to) {
				end = to
			}
			a, err := dashboardclient.ActiveCustomers(ctx, gql, start, end)
			require.NoError(t, err)
			want["active-customers"] = append(want["active-customers"],
				[2]string{start.Format(time.DateOnly), strconv.Itoa(a.ActiveCustomers)})
		}

		liability, err := dashboardclient.PointsLiabilityByDay(ctx, gql, from, to, nil)
		require.NoError(t, err)
		for _, p := range liability.PointsLiabilityByDay {
			want["points-liability"] = append(want["points-liability"], [2]string{p.Day, strconv.Itoa(p.Points)})
		}

		spent, err := dashboardclient.PointsSpentByStoreDay(ctx, gql, from, to, nil)
		require.NoError(t, err)
		paid := map[string]decimal.Decimal{}
		for _, s := range spent.PointsSpentByStoreDay {
			paid[s.Day] = paid[s.Day].Add(s.Amount)
		}
		for day := from; day.Before(to); day = day.AddDate(0, 0, 1) {
			key := day.Format(time.DateOnly)
			want["points-spent"] = append(want["points-spent"], [2]string{key, paid[key].String()})
		}

		first := 100
		perf, err := dashboardclient.CampaignPerformance(ctx, gql, &from, &to, &first)
		require.NoError(t, err)
		require.Len(t, perf.Campaigns.Edges, 1)
		n := perf.Campaigns.Edges[0].Node
		want["campaigns"] = [][2]string{{n.Name, n.Performance.Revenue.String()}}
		want["campaign-lift"] = [][2]string{} // no campaign holds anyone out

		require.Equal(t, want, tables)
		// What the seed holds, so that the comparison is not of empty pages.
		require.Equal(t, "90", tables["points-liability"][len(tables["points-liability"])-1][1])
		require.Equal(t, "230.25", tables["campaigns"][0][1], "Bruno's and Carla's orders")
		require.Equal(t, [2]string{"2026-03-02", "0.6"}, tables["points-spent"][4], "Bruno's points paid R$ 0.60 of a sale")
		require.Contains(t, page, "R$ 0.60 · 60 points")
		require.Equal(t, 4, count)
		require.Contains(t, page, `<dt>Sales</dt><dd data-value="4">`)
		active, err := dashboardclient.ActiveCustomers(ctx, gql, from, to)
		require.NoError(t, err)
		require.Equal(t, 2, active.ActiveCustomers)
		require.Contains(t, page, `<dt>Active customers</dt><dd data-value="2">`)
		require.Regexp(t, `(?s)id="sales-by-day".*<svg class="columns".*<rect class="mark"`, page)

		t.Run("experiments", func(t *testing.T) {
			id := holdoutCampaign(t, b)
			page := requirePanelPage(t, c.get(t, "/panel/insights?"+insightsPeriod.Encode()))
			tables := chartTables(t, page)
			lifts, err := dashboardclient.CampaignLift(ctx, gql, &first)
			require.NoError(t, err)
			var rows [][2]string
			for _, e := range lifts.Campaigns.Edges {
				if e.Node.Lift != nil {
					require.Equal(t, id, e.Node.Id)
					m := e.Node.Lift.RevenuePerCustomer
					rows = append(rows, [2]string{e.Node.Name + " · treated", m.Treated.String()},
						[2]string{e.Node.Name + " · held out (10%)", m.HeldOut.String()})
					require.Equal(t, 3, e.Node.Lift.TreatedCustomers+e.Node.Lift.HeldOutCustomers, "Ana, Bruno and Carla")
				}
			}
			require.Len(t, rows, 2)
			require.Equal(t, rows, tables["campaign-lift"])
			// Three customers: one side has fewer than two, and the page says
			// so in words, under the chart's title and on the treated bar.
			require.Regexp(t, `(?s)id="campaign-lift-heading">[^<]*</h2>\s*<p class="note">Experimento: Too few customers to tell: a group has fewer than two \(treated customers paid R\$ [0-9.]+ per customer`, page)
			require.Contains(t, page, " · too few customers</")
		})

		t.Run("a period it cannot show", func(t *testing.T) {
			for _, tc := range []struct {
				name, query, message string
			}{
				{"ends before it starts", "from=2026-03-06&to=2026-03-01", "ends before it starts"},
				{"not a day", "from=2026-02-30&to=2026-03-01", "as YYYY-MM-DD"},
				{"one day missing", "from=2026-03-01", "as YYYY-MM-DD"},
				{"longer than a year", "from=2025-01-01&to=2026-03-01", "longer than 365 days"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					res := c.get(t, "/panel/insights?"+tc.query)
					require.Equal(t, http.StatusUnprocessableEntity, res.status)
					page := requirePanelPage(t, res)
					require.Contains(t, page, tc.message)
					require.Len(t, chartTables(t, page), 8, "the default period is shown instead")
				})
			}
			res := c.get(t, "/panel/insights?from=2025-03-07&to=2026-03-06")
			require.Equal(t, http.StatusOK, res.status, "a year is allowed")
		})

		t.Run("a sandbox's insights and another's", func(t *testing.T) {
			sb, err := b.app.Backoffice.CreateSandbox(adminContext(b.tenantID), "")
			require.NoError(t, err)
			res := c.get(t, "/panel/sandboxes/"+sb.ID+"/insights?"+insightsPeriod.Encode())
			require.Equal(t, http.StatusOK, res.status, "%s", res.body)
			tables := chartTables(t, requirePanelPage(t, res))
			require.Empty(t, tables["sales-by-store"], "the sandbox has none of production's sales")
			require.Equal(t, http.StatusNotFound, c.get(t, "/panel/sandboxes/"+b.tenantID+"/insights").status)
		})

		t.Run("signed out", func(t *testing.T) {
			res := b.panelClient(t).get(t, "/panel/insights")
			require.Equal(t, http.StatusUnauthorized, res.status)
			require.Contains(t, string(res.body), "Sign in")
		})
	})
}

// TestPanelInsightsBrowser draws the insights page in Chromium, picks a
// period with the form, and checks in a screenshot that every chart has ink.
func TestPanelInsightsBrowser(t *testing.T) {
	browser := chromiumPath(t)
	b := newBackOffice(t, singleDB(t))
	seedDashboard(t, b)
	holdoutCampaign(t, b)
	token := b.userToken(t, b.tenantID, viewer.RoleAnalyst)
	tab := newBrowserTab(t, browser, b.srv.URL)
	ctx := tab.ctx

	require.NoError(t, chromedp.Do(ctx,
		chromedp.EmulateViewport(1100, 900),
		chromedp.Navigate(b.srv.URL+"/panel/insights"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SetValue(chromedp.ID("token"), token),
	))
	// Each button leads to a new page: wait until it has loaded (the page
	// before the period's shows the same charts, of another period).
	res, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS("#signin button")))
	require.NoError(t, err)
	require.EqualValues(t, http.StatusOK, res.Status)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.ID("period")),
		chromedp.SetValue(chromedp.ID("from"), "2026-02-26"),
		chromedp.SetValue(chromedp.ID("to"), "2026-03-06"),
	))
	res, err = chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS("#period button")))
	require.NoError(t, err)
	require.EqualValues(t, http.StatusOK, res.Status)
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("#campaign-lift svg"))))
	location, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href`))
	require.NoError(t, err)
	require.Equal(t, b.srv.URL+"/panel/insights?"+insightsPeriod.Encode(), location)

	for _, id := range []string{"sales-by-day", "sales-by-store", "customers-by-level", "active-customers", "points-liability", "points-spent", "campaigns", "campaign-lift"} {
		t.Run(id, func(t *testing.T) {
			shot, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS("#"+id+" svg")))
			require.NoError(t, err)
			img, err := png.Decode(bytes.NewReader(shot))
			require.NoError(t, err)
			bounds := img.Bounds()
			require.Greater(t, bounds.Dx(), 300, "the chart is drawn wide")
			ink := 0
			for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
				for x := bounds.Min.X; x < bounds.Max.X; x++ {
					r, g, b, _ := img.At(x, y).RGBA()
					if b>>8 > r>>8+60 && b>>8 > g>>8+30 { // the marks' blue
						ink++
					}
				}
			}
			share := float64(ink) / float64(bounds.Dx()*bounds.Dy())
			t.Logf("%s: %dx%d, %.1f%% blue", id, bounds.Dx(), bounds.Dy(), 100*share)
			require.Greater(t, share, 0.005, "the chart has marks")
		})
	}
	tab.requireNoProblems(t)
}

// holdoutCampaign creates a campaign holding out 10% of the customers, from
// before the seeded sales (seedDashboard) until a month from now, and
// returns its id: its lift compares the seeded customers' sales.
func holdoutCampaign(t *testing.T, b *backOffice) string {
	t.Helper()
	start, end := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), time.Now().AddDate(0, 1, 0)
	double := decimal.NewFromInt(2)
	c, err := b.app.Campaigns.CreateCampaign(viewer.TenantContext(context.Background(), b.tenantID), campaigns.CampaignInput{
		Name: "Experimento", Type: "bonus_points", StartsAt: &start, EndsAt: &end, HoldoutBasisPoints: 1000,
		Discount: &campaigns.DiscountInput{Multiplier: &double}})
	require.NoError(t, err)
	return c.ID
}
