package rest

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/domain/wallet"
	"github.com/fideliza/fideliza/ent/walletentry"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// TestCustomerWallets: GET /v1/customers/{id}/wallets lists the cashback
// wallet in R$ (zero before any move), the statement pages its entries
// newest first, and GraphQL's Customer.wallets and walletEntries answer the
// same; every answer is checked against openapi/v1.yaml.
func TestCustomerWallets(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := ptsSetup(t, db)
		cust := e.ptsCustomer(t, e.tenantID, "Helena")
		get := func(path, token string) apiResp { return e.ptsDo(t, http.MethodGet, path, token, nil) }

		r := get("/v1/customers/"+cust+"/wallets", e.token)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		require.JSONEq(t, `{"customer_id":"`+cust+`","data":[{"unit":"cashback","balance":0.00,"pending":0.00,"spendable":0.00,"debt":0.00,"expiring_soonest":null,"gift_card":null}]}`, string(r.body))

		ctx := viewer.TenantContext(context.Background(), e.tenantID)
		w := wallet.Wallets{Dialect: db.Dialect, Now: e.clock}
		move := func(cents int64, source string) wallet.Move {
			return wallet.Move{CustomerID: cust, Unit: wallet.Cashback, Cents: cents, SourceKind: walletentry.SourceKindRedemption,
				SourceID: &source, StoreCode: "LOJA-01", Reason: "cashback of Cashback 5%"}
		}
		require.NoError(t, db.InTx(ctx, func(tx storage.Tx) error {
			for i, c := range []int64{1230, 500} {
				if _, err := w.Credit(ctx, tx.Ent, move(c, []string{"red_a", "red_b"}[i])); err != nil {
					return err
				}
			}
			m := move(230, "PED-9")
			m.SourceKind = walletentry.SourceKindOrder
			_, err := w.Debit(ctx, tx.Ent, m)
			return err
		}))

		r = get("/v1/customers/"+cust+"/wallets", e.token)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		require.Contains(t, string(r.body), `"balance":15.00,"pending":0.00,"spendable":15.00,"debt":0.00,"expiring_soonest":{"amount":15.00,`)

		// An order's hold keeps its cents: spendable, not the balance, drops.
		r = e.ptsDo(t, http.MethodPost, "/v1/wallets/holds", e.token, map[string]any{"customer_id": cust, "wallet": "cashback",
			"order_id": "PED-10", "amount": 4.5})
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		r = get("/v1/customers/"+cust+"/wallets", e.token)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		require.Contains(t, string(r.body), `"balance":15.00,"pending":0.00,"spendable":10.50,`)

		r = get("/v1/customers/"+cust+"/wallets/cashback/entries?limit=2", e.token)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		var page struct {
			Wallet string `json:"wallet"`
			Data   []struct {
				Kind         string      `json:"kind"`
				Amount       json.Number `json:"amount"`
				BalanceAfter json.Number `json:"balance_after"`
				StoreCode    *string     `json:"store_code"`
			} `json:"data"`
			Pagination struct {
				NextCursor *string `json:"next_cursor"`
				HasMore    bool    `json:"has_more"`
				Total      int     `json:"total"`
			} `json:"pagination"`
		}
		require.NoError(t, json.Unmarshal(r.body, &page))
		require.Equal(t, "cashback", page.Wallet)
		require.Equal(t, 3, page.Pagination.Total)
		require.True(t, page.Pagination.HasMore)
		require.Len(t, page.Data, 2)
		require.Equal(t, [3]string{"debit", "-2.30", "15.00"}, [3]string{page.Data[0].Kind, page.Data[0].Amount.String(), page.Data[0].BalanceAfter.String()}, "newest first")
		require.Equal(t, "LOJA-01", *page.Data[0].StoreCode)
		r = get("/v1/customers/"+cust+"/wallets/cashback/entries?limit=2&cursor="+*page.Pagination.NextCursor, e.token)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		require.NoError(t, json.Unmarshal(r.body, &page))
		require.Len(t, page.Data, 1)
		require.Equal(t, [2]string{"credit", "12.30"}, [2]string{page.Data[0].Kind, page.Data[0].Amount.String()})
		require.False(t, page.Pagination.HasMore)

		require.Equal(t, http.StatusNotFound, get("/v1/customers/"+cust+"/wallets/gift_card/entries", e.token).status)
		require.Equal(t, http.StatusNotFound, get("/v1/customers/cus_00000000000000000000000000/wallets", e.token).status)
		require.Equal(t, http.StatusUnprocessableEntity, get("/v1/customers/"+cust+"/wallets/cashback/entries?limit=0", e.token).status)
		require.Equal(t, http.StatusForbidden, get("/v1/customers/"+cust+"/wallets", e.tokenFor(t, "customers:read")).status)

		q, _ := json.Marshal(map[string]string{"query": `{ node(id: "` + cust + `") { ... on Customer {
			wallets { unit balance pending spendable debt expiringSoonest { amount } }
			walletEntries(first: 5) { totalCount edges { node { kind wallet amount balanceAfter debtAfter storeCode } } } } } }`})
		r = apiRaw(t, e.srv, http.MethodPost, "/graphql", e.tokenFor(t, "customers:read", "loyalty:read"), "application/json", string(q))
		require.Equal(t, http.StatusOK, r.status)
		require.NotContains(t, string(r.body), `"errors"`, "%s", r.body)
		require.Contains(t, string(r.body), `"wallets":[{"unit":"cashback","balance":"15.00","pending":"0.00","spendable":"10.50","debt":"0.00","expiringSoonest":{"amount":"15.00"}}]`)
		require.Contains(t, string(r.body), `"totalCount":3`)
		require.Contains(t, string(r.body), `{"kind":"debit","wallet":"cashback","amount":"-2.30","balanceAfter":"15.00","debtAfter":"0.00","storeCode":"LOJA-01"}`)
	})
}
