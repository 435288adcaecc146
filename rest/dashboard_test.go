package rest_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/campaigns"
	customersctx "github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/dashboardclient"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// bearerTransport sends every request with a bearer token.
type bearerTransport struct {
	token string
	base  http.RoundTripper
}

func (t bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	return t.base.RoundTrip(r)
}

// httpClientWithBearer is an HTTP client that signs its requests with token,
// as a back-office app hands genqlient.
func httpClientWithBearer(token string) *http.Client {
	return &http.Client{Transport: bearerTransport{token: token, base: http.DefaultTransport}, Timeout: 30 * time.Second}
}

// dashDec parses an exact decimal.
func dashDec(t *testing.T, s string) decimal.Decimal {
	t.Helper()
	d, err := decimal.NewFromString(s)
	require.NoError(t, err)
	return d
}

// dashTime parses an RFC 3339 instant.
func dashTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	require.NoError(t, err)
	return v
}

// dashRequireDec says want and got are the same number.
func dashRequireDec(t *testing.T, want string, got decimal.Decimal, what string) {
	t.Helper()
	require.Truef(t, dashDec(t, want).Equal(got), "%s: want %s, got %s", what, want, got)
}

// dashRequireCode says err is a GraphQL answer whose first error has the
// extension code and whose message contains message.
func dashRequireCode(t *testing.T, err error, code, message string) {
	t.Helper()
	require.Error(t, err)
	var list gqlerror.List
	require.Truef(t, errors.As(err, &list), "not a GraphQL error: %T %v", err, err)
	require.NotEmpty(t, list)
	require.Equal(t, code, list[0].Extensions["code"], "%v", err)
	require.Contains(t, err.Error(), message)
}

// dashboardData is what the test put in the tenant.
type dashboardData struct {
	stores     map[string]*ent.Store // by code
	ana        *ent.Customer         // credited now: silver, active now
	campaign   *ent.Campaign
	credited   int64
	expiry     time.Time // of the credited points
	creditFrom time.Time // the credit happened within [creditFrom, creditTo)
	creditTo   time.Time
}

// seedDashboard creates stores, customers, points, a campaign with two
// redemptions and four sales in the back office's tenant.
func seedDashboard(t *testing.T, b *backOffice) dashboardData {
	t.Helper()
	ctx := viewer.TenantContext(context.Background(), b.tenantID)
	d := dashboardData{stores: map[string]*ent.Store{}, credited: 1500}
	for code, name := range map[string]string{"LJ01": "Loja Centro", "LJ02": "Loja Shopping"} {
		s, err := b.app.Backoffice.CreateStore(ctx, b.tenantID, code, name)
		require.NoError(t, err)
		d.stores[code] = s
	}
	customers := make([]*ent.Customer, 0, 3)
	for _, c := range []struct{ name, email, cpf string }{
		{"Ana", "ana@x.example", "52998224725"},
		{"Bruno", "bruno@x.example", "11144477735"},
		{"Carla", "carla@x.example", "39053344705"},
	} {
		cust, err := b.app.Customers.CreateCustomer(ctx, customersctx.CustomerInput{
			Name: opt.Of(c.name), Email: opt.Of(c.email), CPF: opt.Of(c.cpf),
		})
		require.NoError(t, err)
		customers = append(customers, cust)
	}
	d.ana = customers[0]
	bruno, carla := customers[1], customers[2]

	// Ana earns 1500 points now: silver (1000), the only liability.
	d.creditFrom = time.Now().Add(-time.Minute)
	mv, err := b.app.Loyalty.CreditPoints(ctx, loyalty.CreditInput{CustomerID: d.ana.ID, OrderID: "order-ana-1", Points: &d.credited})
	require.NoError(t, err)
	d.creditTo = time.Now().Add(time.Minute)
	require.NotNil(t, mv.Entry.ExpiresAt)
	d.expiry = *mv.Entry.ExpiresAt

	receipts := map[string]string{}
	// Sales; 2026-03-02T01:30Z is still 2026-03-01 in São Paulo (UTC-3).
	for _, s := range []struct {
		store, receipt, at        string
		amount, discount, payable string
		customer                  *ent.Customer
	}{
		{"LJ01", "1001", "2026-03-02T01:30:00Z", "100.00", "10.00", "90.00", bruno},
		{"LJ01", "1002", "2026-03-02T15:00:00Z", "50.00", "0", "50.00", nil},
		{"LJ02", "2001", "2026-03-01T12:00:00Z", "200.10", "0.10", "200.00", nil},
		{"LJ02", "2002", "2026-03-01T20:00:00Z", "19.90", "0", "19.90", nil},
	} {
		c := b.app.DB.Ent.Sale.Create().
			SetStoreID(d.stores[s.store].ID).SetExternalID(s.receipt).SetSoldAt(dashTime(t, s.at)).
			SetAmount(dashDec(t, s.amount)).SetDiscountAmount(dashDec(t, s.discount)).SetAmountPayable(dashDec(t, s.payable))
		if s.customer != nil {
			c.SetCustomerID(s.customer.ID)
		}
		sl, err := c.Save(ctx)
		require.NoError(t, err)
		receipts[s.receipt] = sl.ID
	}
	// Bruno paid R$ 0.60 of sale 1001 with 60 points (a hold's): the debit
	// below, late on March 2 in São Paulo.
	_, err = b.app.DB.Ent.SalePayment.Create().SetSaleID(receipts["1001"]).SetPaymentID("1").SetMethod("POINTS").
		SetAmount(dashDec(t, "0.60")).SetHoldID("phd_01J00000000000000000000000").Save(ctx)
	require.NoError(t, err)

	// Past movements written straight into the ledger: Carla holds 50
	// from February 27; Bruno earns 100 on March 1 and spends 60 late on
	// March 2 in São Paulo (already March 3 in UTC), paying sale 1001.
	for _, e := range []struct {
		customer      *ent.Customer
		at            string
		points, after int64
	}{
		{carla, "2026-02-27T12:00:00Z", 50, 50},
		{bruno, "2026-03-01T12:00:00Z", 100, 100},
		{bruno, "2026-03-03T02:00:00Z", -60, 40},
	} {
		kind, source := pointsentry.KindCredit, pointsentry.SourceKindOperator
		var sourceID *string
		if e.points < 0 {
			kind, source, sourceID = pointsentry.KindDebit, pointsentry.SourceKindSale, new(receipts["1001"])
		}
		_, err := b.app.DB.Ent.PointsEntry.Create().SetCustomerID(e.customer.ID).SetCreatedAt(dashTime(t, e.at)).
			SetKind(kind).SetSourceKind(source).SetNillableSourceID(sourceID).SetPoints(e.points).SetBalanceAfter(e.after).
			Save(ctx)
		require.NoError(t, err)
	}

	// A discount campaign live since February, redeemed twice in March.
	starts, ends := dashTime(t, "2026-02-01T00:00:00-03:00"), time.Now().AddDate(0, 1, 0)
	ten := dashDec(t, "10")
	d.campaign, err = b.app.Campaigns.CreateCampaign(ctx, campaigns.CampaignInput{
		Name: "Dez reais", Type: "discount", StartsAt: &starts, EndsAt: &ends,
		Discount: &campaigns.DiscountInput{Mode: "fixed_amount", Value: &ten},
	})
	require.NoError(t, err)
	require.Equal(t, "active", string(d.campaign.Status), "the app's view of a campaign past its start")
	// Store the status its dates give, as the lifecycle job does within a
	// minute: Query.campaigns shows the stored status, not the computed one.
	lifecycle := app.New(&app.Config{DB: b.app.DB, Clock: time.Now})
	require.NoError(t, lifecycle.Campaigns.RunCampaignLifecycle(context.Background(), jobs.CampaignLifecycle{}))
	for _, r := range []struct {
		customer       *ent.Customer
		order, at      string
		paid, discount string
	}{
		{bruno, "order-bruno-1", "2026-03-01T15:00:00Z", "90.00", "10.00"},
		{carla, "order-carla-1", "2026-03-05T12:00:00Z", "140.25", "10.00"},
	} {
		_, err := b.app.DB.Ent.Redemption.Create().
			SetCampaignID(d.campaign.ID).SetCustomerID(r.customer.ID).SetOrderID(r.order).
			SetCreatedAt(dashTime(t, r.at)).
			SetAmountPaid(dashDec(t, r.paid)).SetDiscountAmount(dashDec(t, r.discount)).SetCashbackAmount(decimal.Zero).
			SetBenefit(json.RawMessage(`{"type":"discount"}`)).
			Save(ctx)
		require.NoError(t, err)
	}

	return d
}

func TestDashboardQueriesWithGeneratedClient(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		b := newBackOffice(t, db)
		d := seedDashboard(t, b)
		client := graphql.NewClient(b.srv.URL+"/graphql", httpClientWithBearer(b.userToken(t, b.tenantID, viewer.RoleAnalyst)))
		ctx := context.Background()

		t.Run("CustomersByLevel", func(t *testing.T) {
			res, err := dashboardclient.CustomersByLevel(ctx, client)
			require.NoError(t, err)
			require.Equal(t, []dashboardclient.CustomersByLevelCustomersByLevelLevelCount{
				{Level: dashboardclient.CustomerLevelBronze, Customers: 2},
				{Level: dashboardclient.CustomerLevelSilver, Customers: 1},
				{Level: dashboardclient.CustomerLevelGold, Customers: 0},
				{Level: dashboardclient.CustomerLevelDiamond, Customers: 0},
			}, res.CustomersByLevel)
		})

		t.Run("ActiveCustomers", func(t *testing.T) {
			for _, tc := range []struct {
				name     string
				from, to time.Time
				want     int
			}{
				// Ana's credit.
				{"around the credit", d.creditFrom, d.creditTo, 1},
				// Bruno's sale and redemption, Carla's redemption.
				{"March", dashTime(t, "2026-03-01T00:00:00Z"), dashTime(t, "2026-03-06T00:00:00Z"), 2},
				// Carla's redemption is on the 5th, outside [1st, 5th).
				{"March before Carla", dashTime(t, "2026-03-01T00:00:00Z"), dashTime(t, "2026-03-05T00:00:00Z"), 1},
				{"before anything", dashTime(t, "2025-01-01T00:00:00Z"), dashTime(t, "2025-02-01T00:00:00Z"), 0},
			} {
				t.Run(tc.name, func(t *testing.T) {
					res, err := dashboardclient.ActiveCustomers(ctx, client, tc.from, tc.to)
					require.NoError(t, err)
					require.Equal(t, tc.want, res.ActiveCustomers)
				})
			}
		})

		t.Run("PointsLiability", func(t *testing.T) {
			res, err := dashboardclient.PointsLiability(ctx, client)
			require.NoError(t, err)
			l := res.PointsLiability
			require.Equal(t, int(d.credited), l.Total)
			require.Equal(t, []dashboardclient.PointsLiabilityPointsLiabilityByLevelPointsByLevel{
				{Level: dashboardclient.CustomerLevelBronze, Customers: 2, Points: 0},
				{Level: dashboardclient.CustomerLevelSilver, Customers: 1, Points: int(d.credited)},
				{Level: dashboardclient.CustomerLevelGold, Customers: 0, Points: 0},
				{Level: dashboardclient.CustomerLevelDiamond, Customers: 0, Points: 0},
			}, l.ByLevel)
			require.Equal(t, []dashboardclient.PointsLiabilityPointsLiabilityByExpiryMonthPointsByMonth{
				{Month: d.expiry.UTC().Format("2006-01"), Points: int(d.credited)},
			}, l.ByExpiryMonth)
		})

		t.Run("CampaignPerformance", func(t *testing.T) {
			first := 10
			for _, tc := range []struct {
				name                        string
				from, to                    *time.Time
				redemptions                 int
				discount, cashback, revenue string
			}{
				{"ever", nil, nil, 2, "20.00", "0", "230.25"},
				{"from March 2", new(dashTime(t, "2026-03-02T00:00:00Z")), nil, 1, "10.00", "0", "140.25"},
				{"to March 2", nil, new(dashTime(t, "2026-03-02T00:00:00Z")), 1, "10.00", "0", "90.00"},
				{"March 1 to 5", new(dashTime(t, "2026-03-01T00:00:00Z")), new(dashTime(t, "2026-03-05T00:00:00Z")), 1, "10.00", "0", "90.00"},
				{"February", new(dashTime(t, "2026-02-01T00:00:00Z")), new(dashTime(t, "2026-03-01T00:00:00Z")), 0, "0", "0", "0"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					res, err := dashboardclient.CampaignPerformance(ctx, client, tc.from, tc.to, &first)
					require.NoError(t, err)
					edges := res.Campaigns.Edges
					require.Len(t, edges, 1)
					require.NotNil(t, edges[0])
					n := edges[0].Node
					require.NotNil(t, n)
					require.Equal(t, d.campaign.ID, n.Id)
					require.Equal(t, "Dez reais", n.Name)
					require.Equal(t, dashboardclient.CampaignTypeDiscount, n.Type)
					require.Equal(t, dashboardclient.CampaignStatusActive, n.Status)
					p := n.Performance
					require.Equal(t, tc.redemptions, p.Redemptions)
					dashRequireDec(t, tc.discount, p.DiscountGiven, "discountGiven")
					dashRequireDec(t, tc.cashback, p.CashbackPromised, "cashbackPromised")
					dashRequireDec(t, tc.revenue, p.Revenue, "revenue")
				})
			}
		})

		t.Run("SalesByStoreDay", func(t *testing.T) {
			type row struct {
				store, day                string
				sales                     int
				amount, discount, payable string
			}
			from, to := dashTime(t, "2026-02-28T00:00:00Z"), dashTime(t, "2026-03-04T00:00:00Z")
			saoPaulo := []row{
				{"LJ01", "2026-03-01", 1, "100.00", "10.00", "90.00"},
				{"LJ02", "2026-03-01", 2, "220.00", "0.10", "219.90"},
				{"LJ01", "2026-03-02", 1, "50.00", "0", "50.00"},
			}
			for _, tc := range []struct {
				name     string
				timeZone *string
				want     []row
			}{
				{"default time zone", nil, saoPaulo},
				{"America/Sao_Paulo", new("America/Sao_Paulo"), saoPaulo},
				{"UTC", new("UTC"), []row{
					{"LJ02", "2026-03-01", 2, "220.00", "0.10", "219.90"},
					{"LJ01", "2026-03-02", 2, "150.00", "10.00", "140.00"},
				}},
			} {
				t.Run(tc.name, func(t *testing.T) {
					res, err := dashboardclient.SalesByStoreDay(ctx, client, from, to, tc.timeZone)
					require.NoError(t, err)
					got := res.SalesByStoreDay
					require.Len(t, got, len(tc.want))
					for i, w := range tc.want {
						g := got[i]
						s := d.stores[w.store]
						require.Equal(t, dashboardclient.SalesByStoreDaySalesByStoreDayStoreDaySalesStore{
							Id: s.ID, Code: s.Code, Name: s.Name,
						}, g.Store, "row %d", i)
						require.Equal(t, w.day, g.Day, "row %d", i)
						require.Equal(t, w.sales, g.Sales, "row %d", i)
						dashRequireDec(t, w.amount, g.Amount, "amount")
						dashRequireDec(t, w.discount, g.DiscountAmount, "discountAmount")
						dashRequireDec(t, w.payable, g.AmountPayable, "amountPayable")
					}
				})
			}
			t.Run("a period before the sales is empty", func(t *testing.T) {
				res, err := dashboardclient.SalesByStoreDay(ctx, client,
					dashTime(t, "2026-01-01T00:00:00Z"), dashTime(t, "2026-02-01T00:00:00Z"), nil)
				require.NoError(t, err)
				require.Empty(t, res.SalesByStoreDay)
			})
		})

		t.Run("PointsSpentByStoreDay", func(t *testing.T) {
			// Bruno paid R$ 0.60 of sale 1001 (LJ01) with 60 points late on
			// March 2 in São Paulo (already March 3 in UTC).
			type row = dashboardclient.PointsSpentByStoreDayPointsSpentByStoreDayStoreDayPointsSpent
			type store = dashboardclient.PointsSpentByStoreDayPointsSpentByStoreDayStoreDayPointsSpentStore
			from, to := dashTime(t, "2026-02-28T00:00:00Z"), dashTime(t, "2026-03-04T00:00:00Z")
			for _, tc := range []struct {
				name     string
				timeZone *string
				from     time.Time
				want     []row
			}{
				{"the tenant's time zone", nil, from, []row{{Store: store{Code: "LJ01"}, Day: "2026-03-02", Sales: 1, Points: 60, Amount: dashDec(t, "0.60")}}},
				{"UTC", new("UTC"), from, []row{{Store: store{Code: "LJ01"}, Day: "2026-03-03", Sales: 1, Points: 60, Amount: dashDec(t, "0.60")}}},
				{"a period after the spending", nil, dashTime(t, "2026-03-03T03:00:00Z"), []row{}},
			} {
				t.Run(tc.name, func(t *testing.T) {
					res, err := dashboardclient.PointsSpentByStoreDay(ctx, client, tc.from, to, tc.timeZone)
					require.NoError(t, err)
					require.Len(t, res.PointsSpentByStoreDay, len(tc.want))
					for i, w := range tc.want {
						g := res.PointsSpentByStoreDay[i]
						require.Equal(t, []any{w.Store, w.Day, w.Sales, w.Points}, []any{g.Store, g.Day, g.Sales, g.Points})
						dashRequireDec(t, w.Amount.String(), g.Amount, "amount")
					}
				})
			}
		})

		t.Run("PointsLiabilityByDay", func(t *testing.T) {
			// Ana's 1500 points were credited now; Carla holds 50 from
			// February 27; Bruno earns 100 on March 1 and spends 60 late on
			// March 2 in São Paulo (already March 3 in UTC).
			type day = dashboardclient.PointsLiabilityByDayPointsLiabilityByDayDayPoints
			for _, tc := range []struct {
				name     string
				from, to time.Time
				timeZone *string
				want     []day
			}{
				{"São Paulo days", dashTime(t, "2026-03-01T03:00:00Z"), dashTime(t, "2026-03-04T03:00:00Z"), nil,
					[]day{{Day: "2026-03-01", Points: 150}, {Day: "2026-03-02", Points: 90}, {Day: "2026-03-03", Points: 90}}},
				{"UTC days", dashTime(t, "2026-03-01T00:00:00Z"), dashTime(t, "2026-03-04T00:00:00Z"), new("UTC"),
					[]day{{Day: "2026-03-01", Points: 150}, {Day: "2026-03-02", Points: 150}, {Day: "2026-03-03", Points: 90}}},
				{"a period ending mid-day", dashTime(t, "2026-02-26T00:00:00Z"), dashTime(t, "2026-02-27T12:00:00Z"), new("UTC"),
					[]day{{Day: "2026-02-26", Points: 0}, {Day: "2026-02-27", Points: 0}}},
				{"up to now", time.Now().Add(-24 * time.Hour), time.Now().Add(time.Hour), new("UTC"), nil},
			} {
				t.Run(tc.name, func(t *testing.T) {
					res, err := dashboardclient.PointsLiabilityByDay(ctx, client, tc.from, tc.to, tc.timeZone)
					require.NoError(t, err)
					got := res.PointsLiabilityByDay
					if tc.want != nil {
						require.Equal(t, tc.want, got)
						return
					}
					// Everything written so far: the ledger's view of the balances.
					require.NotEmpty(t, got)
					require.Equal(t, int(d.credited)+40+50, got[len(got)-1].Points)
				})
			}
		})

		t.Run("invalid arguments are GraphQL errors", func(t *testing.T) {
			march1, march2 := dashTime(t, "2026-03-01T00:00:00Z"), dashTime(t, "2026-03-02T00:00:00Z")
			for _, tc := range []struct {
				name    string
				call    func() error
				message string
			}{
				{"active customers: to before from", func() error {
					_, err := dashboardclient.ActiveCustomers(ctx, client, march2, march1)
					return err
				}, "must be after from"},
				{"active customers: empty period", func() error {
					_, err := dashboardclient.ActiveCustomers(ctx, client, march1, march1)
					return err
				}, "must be after from"},
				{"sales: to before from", func() error {
					_, err := dashboardclient.SalesByStoreDay(ctx, client, march2, march1, nil)
					return err
				}, "must be after from"},
				{"sales: longer than a year", func() error {
					_, err := dashboardclient.SalesByStoreDay(ctx, client, march1, march1.AddDate(1, 0, 2), nil)
					return err
				}, "366 days"},
				{"sales: unknown time zone", func() error {
					_, err := dashboardclient.SalesByStoreDay(ctx, client, march1, march2, new("Mars/Olympus_Mons"))
					return err
				}, "unknown time zone"},
				{"liability: longer than a year", func() error {
					_, err := dashboardclient.PointsLiabilityByDay(ctx, client, march1, march1.AddDate(1, 0, 2), nil)
					return err
				}, "366 days"},
				{"sales: Local is no IANA zone", func() error {
					_, err := dashboardclient.SalesByStoreDay(ctx, client, march1, march2, new("Local"))
					return err
				}, "unknown time zone"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					dashRequireCode(t, tc.call(), "validation_error", tc.message)
				})
			}
		})

		t.Run("money travels as decimal strings", func(t *testing.T) {
			// What the Decimal binding decodes: JSON strings, never floats.
			a := b.gql(t, b.userToken(t, b.tenantID, viewer.RoleAnalyst), dashboardclient.CampaignPerformance_Operation, nil)
			require.Empty(t, a.Errors)
			var data struct {
				Campaigns struct {
					Edges []struct {
						Node struct {
							Performance map[string]any `json:"performance"`
						} `json:"node"`
					} `json:"edges"`
				} `json:"campaigns"`
			}
			require.NoError(t, json.Unmarshal(a.Data, &data))
			require.Len(t, data.Campaigns.Edges, 1)
			perf := data.Campaigns.Edges[0].Node.Performance
			for field, want := range map[string]string{"discountGiven": "20", "cashbackPromised": "0", "revenue": "230.25"} {
				got, ok := perf[field].(string)
				require.Truef(t, ok, "%s is %T, not a string", field, perf[field])
				dashRequireDec(t, want, dashDec(t, got), field)
			}
		})

		t.Run("without a token the client gets an error", func(t *testing.T) {
			anon := graphql.NewClient(b.srv.URL+"/graphql", http.DefaultClient)
			_, err := dashboardclient.CustomersByLevel(ctx, anon)
			var httpErr *graphql.HTTPError
			require.ErrorAs(t, err, &httpErr)
			require.Equal(t, http.StatusUnauthorized, httpErr.StatusCode)
		})
	})
}
