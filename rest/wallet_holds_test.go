package rest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/domain/wallet"
	"github.com/fideliza/fideliza/ent/walletentry"
	"github.com/fideliza/fideliza/ent/wallethold"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// TestOnlineCashbackHolds: POST /v1/wallets/holds reserves R$ of the
// cashback wallet for an order (the same order asked again replays it,
// other cents under it are 409), refused with the programme's codes; its
// capture debits once and replays; its rollback refunds once and replays;
// a till's hold is neither captured nor rolled back online; the statement
// lists the refund; GraphQL sets and reads the programme's rules. Every
// answer is checked against openapi/v1.yaml.
func TestOnlineCashbackHolds(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := ptsSetup(t, db)
		cust := e.ptsCustomer(t, e.tenantID, "Marina")
		ctx := viewer.TenantContext(context.Background(), e.tenantID)
		w := wallet.Wallets{Dialect: db.Dialect, Now: e.clock}
		require.NoError(t, db.InTx(ctx, func(tx storage.Tx) error {
			source := "red_a"
			_, err := w.Credit(ctx, tx.Ent, wallet.Move{CustomerID: cust, Unit: wallet.Cashback, Cents: 2000,
				SourceKind: walletentry.SourceKindRedemption, SourceID: &source, Reason: "cashback of Cashback 10%"})
			return err
		}))
		post := func(path, token string, body map[string]any) apiResp {
			return e.ptsDo(t, http.MethodPost, path, token, body)
		}
		hold := func(order, amount string) apiResp {
			return post("/v1/wallets/holds", e.token, map[string]any{"customer_id": cust, "wallet": "cashback",
				"order_id": order, "amount": json.Number(amount), "order_amount": json.Number("120.00")})
		}
		capture := func(id, order string) apiResp {
			return post("/v1/wallets/holds/"+id+"/capture", e.token, map[string]any{"order_id": order, "order_amount": json.Number("120.00")})
		}
		rollback := func(id string) apiResp {
			return post("/v1/wallets/holds/"+id+"/rollback", e.token, map[string]any{"reason": "pedido cancelado"})
		}
		code := func(r apiResp) string { return fmt.Sprint(r.status, " ", r.obj(t)["error"]) }

		r := hold("PED-1", "12.34")
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		h := r.obj(t)
		id := h["hold_id"].(string)
		require.Equal(t, map[string]any{"hold_id": id, "customer_id": cust, "wallet": "cashback", "order_id": "PED-1",
			"amount": json.Number("12.34"), "status": "open", "expires_at": h["expires_at"]}, h)
		again := hold("PED-1", "12.34")
		require.Equal(t, http.StatusCreated, again.status)
		require.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
		require.Equal(t, id, again.obj(t)["hold_id"])
		require.Equal(t, "409 cashback_hold_session", code(hold("PED-1", "1.00")))
		require.Equal(t, "422 cashback_insufficient", code(hold("PED-2", "7.67")), "R$ 7.66 are left")
		require.Equal(t, "422 validation_error", code(post("/v1/wallets/holds", e.token, map[string]any{"customer_id": cust,
			"wallet": "gift_card", "order_id": "PED-2", "amount": 1})))
		require.Equal(t, "404 not_found", code(post("/v1/wallets/holds", e.token, map[string]any{
			"customer_id": "cus_00000000000000000000000000", "wallet": "cashback", "order_id": "PED-2", "amount": 1})))
		require.Equal(t, http.StatusForbidden, post("/v1/wallets/holds", e.tokenFor(t, "loyalty:read"), map[string]any{
			"customer_id": cust, "wallet": "cashback", "order_id": "PED-2", "amount": 1}).status)

		require.Equal(t, "404 not_found", code(capture("whd_00000000000000000000000000", "PED-1")))
		require.Equal(t, "422 cashback_hold_foreign", code(capture(id, "PED-9")), "another order")
		r = capture(id, "PED-1")
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		c := r.obj(t)
		require.Equal(t, "spent", c["status"])
		entry := c["entry"].(map[string]any)
		require.Equal(t, []any{"debit", json.Number("-12.34"), json.Number("7.66")}, []any{entry["kind"], entry["amount"], entry["balance_after"]})
		r = capture(id, "PED-1")
		require.Equal(t, http.StatusOK, r.status)
		require.Equal(t, "true", r.header.Get("Idempotent-Replayed"))
		require.Equal(t, entry["entry_id"], r.obj(t)["entry"].(map[string]any)["entry_id"])

		r = rollback(id)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		rb := r.obj(t)
		require.Equal(t, "released", rb["status"])
		refund := rb["entry"].(map[string]any)
		require.Equal(t, []any{"refund", json.Number("12.34"), json.Number("20.00")}, []any{refund["kind"], refund["amount"], refund["balance_after"]})
		r = rollback(id)
		require.Equal(t, "true", r.header.Get("Idempotent-Replayed"))
		require.Equal(t, refund["entry_id"], r.obj(t)["entry"].(map[string]any)["entry_id"])
		require.Equal(t, "422 cashback_hold_unavailable", code(capture(id, "PED-1")))

		require.NoError(t, db.InTx(ctx, func(tx storage.Tx) error { // a till's hold: not the order's to use
			h, _, err := w.PlaceHold(ctx, tx.Ent, wallet.Hold{CustomerID: cust, Unit: wallet.Cashback, Channel: wallethold.ChannelPdv,
				Session: "caixa-7", StoreCode: "LOJA-01", Cents: 100})
			if err == nil {
				id = h.ID
			}
			return err
		}))
		require.Equal(t, "422 cashback_hold_foreign", code(capture(id, "PED-1")))
		require.Equal(t, "422 cashback_hold_foreign", code(rollback(id)))

		r = e.ptsDo(t, http.MethodGet, "/v1/customers/"+cust+"/wallets/cashback/entries", e.token, nil)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		require.Contains(t, string(r.body), `"kind":"refund","amount":12.34,"balance_after":20.00`)

		q, _ := json.Marshal(map[string]string{"query": `mutation { updateTenantSettings(input: {cashbackSpendChannels: ["pdv"],
			cashbackSpendMaxShare: "0.1", cashbackSpendMin: "5.00"}) { cashbackSpendChannels cashbackSpendMaxShare cashbackSpendMin } }`})
		admin, err := e.app.Auth.IssueUserToken(ctx, e.tenantID, viewer.RoleAdmin, "office-admin", time.Hour)
		require.NoError(t, err)
		r = apiRaw(t, e.srv, http.MethodPost, "/graphql", admin, "application/json", string(q))
		require.Equal(t, http.StatusOK, r.status)
		require.JSONEq(t, `{"data":{"updateTenantSettings":{"cashbackSpendChannels":["pdv"],"cashbackSpendMaxShare":"0.1","cashbackSpendMin":"5.00"}}}`,
			string(r.body))
		require.Equal(t, "422 cashback_payment_off", code(hold("PED-3", "5.00")))
	})
}
