package rest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// TestSubscriptionRedemptionsAndImports: Subscription.redemptions delivers
// the redemptions the API makes and rolls back, importProgress one
// import's progress from its start to its end (not another import's);
// each checks its scope, and importProgress an import of the tenant.
func TestSubscriptionRedemptionsAndImports(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := campSetup(t, db)
		var importID string

		t.Run("redemptions", func(t *testing.T) {
			c := wsDial(t, e.srv.URL, e.token).ready()
			c.subscribe("r", "redemptions")
			waitSubscribedTo(t, e.app, e.tenantID, c, "r", outbox.RedemptionRolledBack, "redemptions")
			ana := e.campCustomer(t, "Ana Prado")
			discount := e.campCreateID(t, "discount", "name", "Dez por cento")
			r := e.campRedeem(t, discount, campRedeemBody(ana, "order-1", e.campTokenFor(t, ana), "36.00"))
			require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
			id := r.obj(t)["redemption_id"].(string)

			made := c.event("r", "redemptions")
			require.Equal(t, []any{outbox.RedemptionCreated, id}, []any{made["type"], made["subjectID"]})
			require.Equal(t, map[string]any{"redemption_id": id, "campaign_id": discount, "customer_id": ana, "order_id": "order-1",
				"store_code": "loja-1", "discount_amount": "4", "cashback_amount": "0", "bonus_points": float64(0)}, made["data"])

			r = e.campDo(t, http.MethodPost, "/v1/redemptions/"+id+"/rollback", e.token, map[string]any{"reason": "order cancelled"})
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			back := c.event("r", "redemptions")
			require.Equal(t, []any{outbox.RedemptionRolledBack, id, "order cancelled"},
				[]any{back["type"], back["subjectID"], back["data"].(map[string]any)["reason"]})
		})

		t.Run("importProgress", func(t *testing.T) {
			send := func(file string) string {
				req, err := http.NewRequest(http.MethodPost, e.srv.URL+"/v1/customers/imports", bytes.NewReader([]byte(file)))
				require.NoError(t, err)
				req.Header.Set("Authorization", "Bearer "+e.tokenFor(t, "customers:read", "customers:write"))
				req.Header.Set("Content-Type", "text/csv")
				res, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				defer res.Body.Close()
				require.Equal(t, http.StatusAccepted, res.StatusCode)
				var imp struct{ ID string }
				require.NoError(t, json.NewDecoder(res.Body).Decode(&imp))
				return imp.ID
			}
			other := send("external_id,name,email,cpf\nCRM-9,Outra,outra@example.com,123\n")
			id := send("external_id,name,email,cpf\nCRM-1,Cliente,cliente@example.com,123\n")
			importID = id
			c := wsDial(t, e.srv.URL, e.token).ready()
			c.send(wsMessage{ID: "i", Type: "subscribe", Payload: map[string]any{
				"query":     "subscription($id: ID!) { importProgress(id: $id) { id tenantID type subjectID data } }",
				"variables": map[string]any{"id": id},
			}})
			waitSubscribedAbout(t, e.app, e.tenantID, c, "i", outbox.CustomerImportProgressed, "importProgress", id)
			require.NoError(t, e.app.Customers.RunCustomerImport(e.ctx, jobs.ImportCustomers{TenantID: e.tenantID, ImportID: other}))
			require.NoError(t, e.app.Customers.RunCustomerImport(e.ctx, jobs.ImportCustomers{TenantID: e.tenantID, ImportID: id}))
			var statuses []any
			for len(statuses) == 0 || statuses[len(statuses)-1] != "succeeded" {
				got := c.anyEvent("i", "importProgress")
				data := got["data"].(map[string]any)
				if data["status"] == nil {
					continue // a probe
				}
				require.Equal(t, []any{outbox.CustomerImportProgressed, id}, []any{got["type"], got["subjectID"]})
				statuses = append(statuses, data["status"])
				if data["status"] == "succeeded" {
					require.Equal(t, map[string]any{"import_id": id, "status": "succeeded", "rows": float64(1),
						"created": float64(0), "updated": float64(0), "refused": float64(1)}, data)
				}
			}
			require.Equal(t, []any{"running", "running", "succeeded"}, statuses, "started, a batch, ended")
		})

		t.Run("scopes and tenants", func(t *testing.T) {
			for _, tc := range []struct {
				name, token, query, code string
			}{
				{"redemptions need campaigns:read", e.tokenFor(t, "customers:read"), "subscription { redemptions { id } }", "insufficient_scope"},
				{"importProgress needs customers:read", e.tokenFor(t, "campaigns:read"), `subscription { importProgress(id: "imp_01") { id } }`, "insufficient_scope"},
				{"another tenant's import is not found", e.tenantToken(t, e.newTenant(t, "Outra"), "customers:read"),
					`subscription { importProgress(id: "` + importID + `") { id } }`, "not_found"},
			} {
				c := wsDial(t, e.srv.URL, tc.token).ready()
				c.send(wsMessage{ID: "x", Type: "subscribe", Payload: map[string]any{"query": tc.query}})
				m := c.next()
				require.Equal(t, "next", m.Type, "%s: %v", tc.name, m)
				require.Equal(t, tc.code, m.Payload["errors"].([]any)[0].(map[string]any)["extensions"].(map[string]any)["code"], tc.name)
				require.Equal(t, wsMessage{ID: "x", Type: "complete"}, c.next(), tc.name)
			}
		})
	})
}
