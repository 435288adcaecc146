package rest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/testclock"
	"github.com/fideliza/fideliza/viewer"
)

// TestV2Predictive: the churn score of a customer, the predictive segments
// and their members, on /v2 with /v1's tokens, errors and pagination.
// Thirty customers buy over a year: the loyal keep buying every two weeks,
// the lapsed bought weekly for two months and stopped.
func TestV2Predictive(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		start := time.Date(2025, 11, 1, 12, 0, 0, 0, time.UTC)
		clock := testclock.New(start)
		e := newTestEnv(t, db, func(s *ServerSetup) { s.TestClock = clock })
		ctx := viewer.TenantContext(context.Background(), e.tenantID)
		reader := e.tokenFor(t, "customers:read")
		get := func(token, path string) (int, map[string]any) {
			t.Helper()
			req, err := http.NewRequest(http.MethodGet, e.srv.URL+path, nil)
			require.NoError(t, err)
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			res, err := e.srv.Client().Do(req)
			require.NoError(t, err)
			defer res.Body.Close()
			var m map[string]any
			dec := json.NewDecoder(res.Body)
			dec.UseNumber()
			require.NoError(t, dec.Decode(&m))
			return res.StatusCode, m
		}

		var loyal, lapsed []string
		for i := range 30 {
			c, err := e.app.Customers.CreateCustomer(ctx, customers.CustomerInput{Name: opt.Of(fmt.Sprint("Cliente ", i)),
				Email: opt.Of(fmt.Sprintf("c%d@example.com", i)), CPF: opt.Of(cpfCheck(fmt.Sprintf("%09d", 310000000+i)))})
			require.NoError(t, err)
			if i%3 == 0 {
				lapsed = append(lapsed, c.ID)
			} else {
				loyal = append(loyal, c.ID)
			}
		}
		idle, err := e.app.Customers.CreateCustomer(ctx, customers.CustomerInput{Name: opt.Of("Sem compras"), Email: opt.Of("idle@example.com"),
			CPF: opt.Of(cpfCheck("319999999"))})
		require.NoError(t, err)

		status, m := get(reader, "/v2/customers/"+loyal[0]+"/churn")
		require.Equal(t, http.StatusOK, status, "%v", m)
		require.Equal(t, "unknown", m["risk"], "no model before the first fit: %v", m)

		order := 0
		buy := func(id string) {
			t.Helper()
			order++
			amount := decimal.NewFromInt(int64(40 + order%60))
			_, err := e.app.Loyalty.CreditPoints(ctx, loyalty.CreditInput{CustomerID: id, OrderID: fmt.Sprint("PED-", order), Amount: &amount})
			require.NoError(t, err)
		}
		for week := 0; week < 52; week++ {
			clock.Set(start.AddDate(0, 0, 7*week))
			for i, id := range loyal {
				if (week+i)%2 == 0 {
					buy(id)
				}
			}
			if week < 8 {
				for _, id := range lapsed {
					buy(id)
				}
			}
		}
		clock.Set(start.AddDate(1, 0, 0))
		n, err := e.app.Scoring.ScoreCustomers(ctx, clock.Now())
		require.NoError(t, err)
		require.Equal(t, 31, n)

		status, m = get(reader, "/v2/customers/"+loyal[0]+"/churn")
		require.Equal(t, http.StatusOK, status, "%v", m)
		require.Equal(t, "low", m["risk"], "%v", m)
		for _, k := range []string{"p_alive", "churn_propensity", "expected_purchases_90d", "recency_days", "frequency", "monetary_value", "model_fitted_at"} {
			require.NotNil(t, m[k], k)
		}
		pAlive, _ := m["p_alive"].(json.Number).Float64()
		propensity, _ := m["churn_propensity"].(json.Number).Float64()
		require.InDelta(t, 1, pAlive+propensity, 1e-9)

		status, m = get(reader, "/v2/customers/"+lapsed[0]+"/churn")
		require.Equal(t, http.StatusOK, status, "%v", m)
		require.Equal(t, "high", m["risk"], "weekly buyer gone for ten months: %v", m)
		require.Equal(t, json.Number("7"), m["frequency"])

		status, m = get(reader, "/v2/customers/"+idle.ID+"/churn")
		require.Equal(t, http.StatusOK, status)
		require.Equal(t, "unknown", m["risk"])
		require.Equal(t, "no purchase yet", m["reason"])

		status, m = get(reader, "/v2/segments/predictive")
		require.Equal(t, http.StatusOK, status, "%v", m)
		counts := map[string]int64{}
		for _, s := range m["data"].([]any) {
			sg := s.(map[string]any)
			counts[sg["key"].(string)], _ = sg["customers"].(json.Number).Int64()
		}
		require.Equal(t, int64(len(lapsed)), counts["churn_risk_high"], "%v", counts)
		require.Equal(t, int64(30), counts["churn_risk_high"]+counts["churn_risk_medium"]+counts["churn_risk_low"])
		require.NotNil(t, m["model"])

		status, m = get(reader, "/v2/segments/predictive/churn_risk_high/customers?limit=4")
		require.Equal(t, http.StatusOK, status, "%v", m)
		require.Len(t, m["data"], 4)
		page := m["pagination"].(map[string]any)
		require.Equal(t, json.Number(fmt.Sprint(len(lapsed))), page["total"])
		require.Equal(t, true, page["has_more"])
		for _, c := range m["data"].([]any) {
			require.Contains(t, lapsed, c.(map[string]any)["id"])
		}

		t.Run("a campaign targets a predictive segment", func(t *testing.T) {
			writer := e.tokenFor(t, "campaigns:write", "campaigns:read")
			post := func(path string, body map[string]any) (int, map[string]any) {
				t.Helper()
				raw, err := json.Marshal(body)
				require.NoError(t, err)
				req, err := http.NewRequest(http.MethodPost, e.srv.URL+path, strings.NewReader(string(raw)))
				require.NoError(t, err)
				req.Header.Set("Authorization", "Bearer "+writer)
				req.Header.Set("Content-Type", "application/json")
				res, err := e.srv.Client().Do(req)
				require.NoError(t, err)
				defer res.Body.Close()
				var m map[string]any
				require.NoError(t, json.NewDecoder(res.Body).Decode(&m))
				return res.StatusCode, m
			}
			campaign := func(kv ...any) map[string]any {
				b := map[string]any{"name": "Volte sempre", "type": "discount", "discount": map[string]any{"mode": "percentage", "value": 15},
					"starts_at": clock.Now().Add(-time.Hour).Format(time.RFC3339), "ends_at": clock.Now().Add(24 * time.Hour).Format(time.RFC3339)}
				for i := 0; i+1 < len(kv); i += 2 {
					b[kv[i].(string)] = kv[i+1]
				}
				return b
			}
			status, c := post("/v1/campaigns", campaign("predictive_segment", "churn_risk_high"))
			require.Equal(t, http.StatusCreated, status, "%v", c)
			require.Equal(t, "churn_risk_high", c["predictive_segment"])
			eligible := func(customerID string) bool {
				t.Helper()
				status, v := post("/v1/campaigns/validate", map[string]any{"customer_id": customerID, "channel": "pdv",
					"cart": map[string]any{"items": []any{map[string]any{"sku": "A", "quantity": 1, "unit_price": 100}}}})
				require.Equal(t, http.StatusOK, status, "%v", v)
				for _, x := range v["eligible_campaigns"].([]any) {
					if x.(map[string]any)["campaign_id"] == c["id"] {
						return true
					}
				}
				return false
			}
			require.True(t, eligible(lapsed[1]), "a customer at high churn risk gets the win-back offer")
			require.False(t, eligible(loyal[1]), "a loyal customer does not")

			status, m := post("/v1/campaigns", campaign("predictive_segment", "vip"))
			require.Equal(t, http.StatusUnprocessableEntity, status, "%v", m)
			require.Equal(t, "predictive_segment", m["field"])
		})

		refused := []struct {
			name, token, path string
			status            int
			code              string
		}{
			{"an unknown segment", reader, "/v2/segments/predictive/vip/customers", http.StatusNotFound, "not_found"},
			{"an unknown customer", reader, "/v2/customers/cus_01jd0000000000000000000000/churn", http.StatusNotFound, "not_found"},
			{"no token", "", "/v2/segments/predictive", http.StatusUnauthorized, "invalid_token"},
			{"another scope", e.tokenFor(t, "loyalty:read"), "/v2/segments/predictive", http.StatusForbidden, "insufficient_scope"},
			{"a bad limit", reader, "/v2/segments/predictive/churn_risk_low/customers?limit=0", http.StatusUnprocessableEntity, "validation_error"},
		}
		for _, c := range refused {
			t.Run(c.name, func(t *testing.T) {
				status, m := get(c.token, c.path)
				require.Equal(t, c.status, status, "%v", m)
				require.Equal(t, c.code, m["error"], "%v", m)
			})
		}
	})
}

// TestPredictiveOverGraphQL: the same segments and a customer's score in
// GraphQL.
func TestPredictiveOverGraphQL(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := newTestEnv(t, db)
		ctx := viewer.TenantContext(context.Background(), e.tenantID)
		c, err := e.app.Customers.CreateCustomer(ctx, customers.CustomerInput{Name: opt.Of("Ana"), Email: opt.Of("ana@example.com"),
			CPF: opt.Of(cpfCheck("318000000"))})
		require.NoError(t, err)
		_, err = e.app.Scoring.ScoreCustomers(ctx, time.Now())
		require.NoError(t, err)
		body, err := json.Marshal(map[string]any{"query": `query($id: ID!) {
			predictiveSegments { key customers pAliveBelow }
			node(id: $id) { ... on Customer { score { risk reason frequency } } } }`, "variables": map[string]any{"id": c.ID}})
		require.NoError(t, err)
		status, raw := rawGraphQL(t, e, e.tokenFor(t, "customers:read"), "application/json", string(body))
		require.Equal(t, http.StatusOK, status, raw)
		require.JSONEq(t, `{"data": {
			"predictiveSegments": [
				{"key": "churn_risk_high", "customers": 0, "pAliveBelow": 0.4},
				{"key": "churn_risk_medium", "customers": 0, "pAliveBelow": 0.7},
				{"key": "churn_risk_low", "customers": 0, "pAliveBelow": null},
				{"key": "at_risk_high_value", "customers": 0, "pAliveBelow": 0.7}],
			"node": {"score": {"risk": "unknown", "reason": "no purchase yet", "frequency": 0}}}}`, raw)
	})
}
