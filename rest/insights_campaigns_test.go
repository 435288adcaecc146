package rest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// manyCampaigns is how many campaigns the tenant of
// TestPanelInsightsManyCampaigns runs: two GraphQL pages, and twice what
// the insights page reads.
const manyCampaigns = 200

// pageConnections is the most connections db may hold while it serves the
// insights page and pages of campaigns with their performance: the
// campaigns' lifts read a few at a time, a page's performance together,
// and on PostgreSQL the listening one.
// Every campaign read on its own connection fills a test database's pool
// (8).
const pageConnections = 5

// connectionsOpen is how many connections db's pools hold. Neither pool
// closes an idle connection within a test (PostgreSQL's after five
// minutes, SQLite's read connections never), and a connection is opened
// only when none is idle: it is the most db held at once so far.
func connectionsOpen(db *storage.DB) int {
	if p := db.Pgx(); p != nil {
		return int(p.Stat().TotalConns())
	}
	// On SQLite, what a page reads goes to the read pool, where the change
	// feed's watcher holds one connection for good (storage/notify.go): at
	// the quiet moments this is asked, the one in use, and not the page's.
	// The seeding opened the writer.
	reads := db.Reads.Stats()
	return reads.OpenConnections - reads.InUse
}

// TestPanelInsightsManyCampaigns: the insights page of a tenant with 200
// campaigns, some with redemptions and some holding customers out, and
// the campaigns' performance over GraphQL, answer with every campaign's
// numbers while holding a few connections: the performance of a page of
// campaigns is read together, and the campaigns' lifts a few at a time.
func TestPanelInsightsManyCampaigns(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		b := newBackOffice(t, db)
		sys := viewer.SystemContext(context.Background())
		ctx := viewer.TenantContext(context.Background(), b.tenantID)
		start, end := time.Now().AddDate(0, 0, -30), time.Now().AddDate(0, 1, 0)
		ten := decimal.NewFromInt(10)

		var creates []*ent.CustomerCreate
		for i := range 20 {
			creates = append(creates, db.Ent.Customer.Create().SetTenantID(b.tenantID).
				SetDocument(fmt.Sprintf("%011d", 81000000000+i)).SetName("Cliente "+strconv.Itoa(i)))
		}
		custs, err := db.Ent.Customer.CreateBulk(creates...).Save(sys)
		require.NoError(t, err)

		// Campaign i has i%4 redemptions of R$ (10+i) paid and R$ 1 off
		// each; every tenth holds 10% of its customers out.
		type perf struct {
			redemptions int
			revenue     decimal.Decimal
		}
		want := map[string]perf{}
		var redemptions []*ent.RedemptionCreate
		redeemedAt := time.Now().Add(-time.Hour)
		for i := range manyCampaigns {
			in := campaigns.CampaignInput{Name: fmt.Sprintf("Campanha %03d", i), Type: "discount", StartsAt: &start, EndsAt: &end,
				Discount: &campaigns.DiscountInput{Mode: "percentage", Value: &ten}}
			if i%10 == 0 {
				in.HoldoutBasisPoints = 1000
			}
			c, err := b.app.Campaigns.CreateCampaign(ctx, in)
			require.NoError(t, err)
			paid := decimal.NewFromInt(int64(10 + i))
			p := perf{revenue: decimal.Zero}
			for k := range i % 4 {
				p.redemptions++
				p.revenue = p.revenue.Add(paid)
				cust := custs[(i+k)%len(custs)]
				redemptions = append(redemptions, db.Ent.Redemption.Create().SetTenantID(b.tenantID).SetCampaignID(c.ID).
					SetCustomerID(cust.ID).SetOrderID(fmt.Sprintf("pedido-%d-%d", i, k)).SetCreatedAt(redeemedAt).
					SetAmountPaid(paid).SetDiscountAmount(decimal.NewFromInt(1)).SetCashbackAmount(decimal.Zero).
					SetBenefit(json.RawMessage(`{}`)))
			}
			want[c.ID] = p
		}
		require.NoError(t, db.Ent.Redemption.CreateBulk(redemptions...).Exec(sys))

		token := b.userToken(t, b.tenantID, viewer.RoleAnalyst)
		c := b.panelClient(t)
		c.signIn(t, token)
		require.Less(t, connectionsOpen(db), pageConnections, "the seeding held few connections")

		res := c.get(t, "/panel/insights")
		require.Equal(t, http.StatusOK, res.status, "%s", res.body)
		tables := chartTables(t, requirePanelPage(t, res))
		require.Len(t, tables["campaigns"], 10, "the ten campaigns that brought the most")
		require.Equal(t, [2]string{"Campanha 099", "327"}, tables["campaigns"][0], "the last campaign read brought the most: 3 × R$ 109")
		require.Len(t, tables["campaign-lift"], 2*10, "the ten experiments among the campaigns read")
		require.LessOrEqual(t, connectionsOpen(db), pageConnections, "the insights page held a few connections")

		// Every campaign's performance, two pages over GraphQL, each read
		// in a few statements.
		const query = `query($after: Cursor, $from: Time, $to: Time) {
		  campaigns(first: 100, after: $after) {
		    edges { node { id performance(from: $from, to: $to) { redemptions revenue discountGiven } } }
		    pageInfo { hasNextPage endCursor }
		  } }`
		var statements atomic.Int64
		stop := db.Trace(func(string) { statements.Add(1) })
		defer stop()
		got := map[string]perf{}
		vars := map[string]any{"from": start.Format(time.RFC3339), "to": end.Format(time.RFC3339)}
		for page := 0; ; page++ {
			statements.Store(0)
			a := b.gql(t, token, query, vars)
			require.Empty(t, a.Errors, "%s", a.Raw)
			require.Less(t, statements.Load(), int64(20), "page %d: the performance of its campaigns read together", page)
			var data struct {
				Campaigns struct {
					Edges []struct {
						Node struct {
							ID          string
							Performance struct {
								Redemptions   int
								Revenue       decimal.Decimal
								DiscountGiven decimal.Decimal
							}
						}
					}
					PageInfo struct {
						HasNextPage bool
						EndCursor   string
					}
				}
			}
			require.NoError(t, json.Unmarshal(a.Data, &data))
			for _, e := range data.Campaigns.Edges {
				p := e.Node.Performance
				require.True(t, p.DiscountGiven.Equal(decimal.NewFromInt(int64(p.Redemptions))), "R$ 1 off each redemption")
				got[e.Node.ID] = perf{p.Redemptions, p.Revenue}
			}
			if !data.Campaigns.PageInfo.HasNextPage {
				break
			}
			vars["after"] = data.Campaigns.PageInfo.EndCursor
		}
		require.Len(t, got, manyCampaigns)
		for id, w := range want {
			require.Equal(t, w.redemptions, got[id].redemptions, id)
			require.True(t, w.revenue.Equal(got[id].revenue), "%s: want %s, got %s", id, w.revenue, got[id].revenue)
		}
		require.LessOrEqual(t, connectionsOpen(db), pageConnections, "the campaigns' pages held a few connections")
	})
}

// TestPanelInsightsDatabaseFails: a database that fails under the insights
// page's GraphQL queries is answered as the panel's other pages answer it,
// 503 with the operation's message, not 500.
func TestPanelInsightsDatabaseFails(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		b := newBackOffice(t, db)
		c := b.panelClient(t)
		c.signIn(t, b.userToken(t, b.tenantID, viewer.RoleAnalyst))
		// Warms the caches: the failure then comes from the page's queries.
		require.Equal(t, http.StatusOK, c.get(t, "/panel/insights").status)

		require.NoError(t, db.Close()) // the database goes away
		res := c.get(t, "/panel/insights")
		require.Equal(t, http.StatusServiceUnavailable, res.status, "%s", res.body)
		require.Contains(t, string(res.body), "cannot reach its data")
	})
}
