package rest

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/giftcards"
	"github.com/fideliza/fideliza/domain/giftcard"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// giftCardAnswer is the part of a card's JSON the tests read.
type giftCardAnswer struct {
	ID         string      `json:"id"`
	CodeLast4  string      `json:"code_last4"`
	Status     string      `json:"status"`
	Balance    json.Number `json:"balance"`
	CustomerID *string     `json:"customer_id"`
}

// TestGiftCardsOverREST: a card's life over /v1, every answer checked
// against openapi/v1.yaml: a batch issued with its codes shown once, a
// lookup by code as typed, a load and its replay, a transfer between bearer
// cards, binding (the card then among the customer's wallets), the
// statement, a cancellation, and the refusals.
func TestGiftCardsOverREST(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := ptsSetup(t, db)
		cust := e.ptsCustomer(t, e.tenantID, "Helena")
		do := func(method, path string, body any) apiResp { return e.ptsDo(t, method, path, e.token, body) }

		r := do(http.MethodPost, "/v1/gift-cards", map[string]any{"count": 2, "amount": 50, "note": "Natal"})
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		var issued struct {
			BatchID *string `json:"batch_id"`
			Data    []struct {
				Code     string         `json:"code"`
				GiftCard giftCardAnswer `json:"gift_card"`
			} `json:"data"`
		}
		require.NoError(t, json.Unmarshal(r.body, &issued))
		require.NotNil(t, issued.BatchID)
		require.Len(t, issued.Data, 2)
		a, b := issued.Data[0], issued.Data[1]
		require.Equal(t, "active", a.GiftCard.Status)
		require.Equal(t, "50.00", a.GiftCard.Balance.String())
		require.True(t, strings.HasSuffix(strings.ReplaceAll(a.Code, "-", ""), a.GiftCard.CodeLast4))
		require.NotContains(t, string(do(http.MethodGet, "/v1/gift-cards/"+a.GiftCard.ID, nil).body), a.Code, "the code is shown once")

		r = do(http.MethodGet, "/v1/gift-cards?batch_id="+*issued.BatchID+"&limit=1", nil)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		require.Contains(t, string(r.body), `"total":2`)

		r = do(http.MethodPost, "/v1/gift-cards/lookup", map[string]any{"code": " " + strings.ToLower(a.Code) + " "})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		require.Contains(t, string(r.body), `"id":"`+a.GiftCard.ID+`"`)

		load := map[string]any{"amount": 25.5, "load_id": "RECARGA-1", "store_code": "LOJA-01"}
		r = do(http.MethodPost, "/v1/gift-cards/"+a.GiftCard.ID+"/load", load)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		require.Empty(t, r.header.Values("Idempotent-Replayed"))
		require.Contains(t, string(r.body), `"balance":75.50`)
		r = do(http.MethodPost, "/v1/gift-cards/"+a.GiftCard.ID+"/load", load)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		require.Equal(t, "true", r.header.Get("Idempotent-Replayed"), "the same load_id loads once")

		r = do(http.MethodPost, "/v1/gift-cards/"+b.GiftCard.ID+"/transfer", map[string]any{"to_gift_card_id": a.GiftCard.ID, "transfer_id": "TRF-1"})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		var moved struct {
			Amount json.Number `json:"amount"`
			From   struct {
				GiftCard giftCardAnswer `json:"gift_card"`
			} `json:"from"`
			To struct {
				GiftCard giftCardAnswer `json:"gift_card"`
			} `json:"to"`
		}
		require.NoError(t, json.Unmarshal(r.body, &moved))
		require.Equal(t, [3]string{"50.00", "0.00", "125.50"}, [3]string{moved.Amount.String(), moved.From.GiftCard.Balance.String(), moved.To.GiftCard.Balance.String()})

		r = do(http.MethodPost, "/v1/gift-cards/"+a.GiftCard.ID+"/bind", map[string]any{"customer_id": cust})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		require.Contains(t, string(r.body), `"customer_id":"`+cust+`"`)
		r = do(http.MethodGet, "/v1/customers/"+cust+"/wallets", nil)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		require.Contains(t, string(r.body), `{"unit":"gift_card","balance":125.50,"pending":0.00,"spendable":125.50,"debt":0.00,"expiring_soonest":{"amount":125.50,`)
		require.Contains(t, string(r.body), `"gift_card":{"id":"`+a.GiftCard.ID+`","code_last4":"`+a.GiftCard.CodeLast4+`"}`)

		r = do(http.MethodGet, "/v1/gift-cards/"+a.GiftCard.ID+"/entries?limit=2", nil)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		require.Contains(t, string(r.body), `"total":3`)
		require.Contains(t, string(r.body), `"kind":"transfer_in","amount":50.00,"balance_after":125.50,"source":{"kind":"transfer","id":"TRF-1"}`)

		for _, c := range []struct {
			name, method, path string
			body               any
			status             int
			code, field        string
		}{
			{"a bound card's balance", http.MethodPost, "/v1/gift-cards/" + a.GiftCard.ID + "/transfer",
				map[string]any{"to_gift_card_id": b.GiftCard.ID, "transfer_id": "TRF-2"}, http.StatusConflict, "gift_card_bound", ""},
			{"a load over the limit", http.MethodPost, "/v1/gift-cards/" + a.GiftCard.ID + "/load",
				map[string]any{"amount": 99999, "load_id": "RECARGA-2"}, http.StatusUnprocessableEntity, "gift_card_balance_limit", "amount"},
			{"an unknown card", http.MethodGet, "/v1/gift-cards/gcd_00000000000000000000000000", nil, http.StatusNotFound, "not_found", ""},
			{"binding to another customer", http.MethodPost, "/v1/gift-cards/" + a.GiftCard.ID + "/bind",
				map[string]any{"customer_id": e.ptsCustomer(t, e.tenantID, "Ivo")}, http.StatusConflict, "gift_card_bound_to_another", ""},
			{"an unknown status", http.MethodGet, "/v1/gift-cards?status=lost", nil, http.StatusUnprocessableEntity, "validation_error", "status"},
			{"no cards", http.MethodPost, "/v1/gift-cards", map[string]any{"amount": 10, "count": 0}, http.StatusUnprocessableEntity, "validation_error", "count"},
		} {
			r := do(c.method, c.path, c.body)
			if c.code == "validation_error" {
				requireV1Error(t, r, c.status, c.code, c.field, c.field)
				continue
			}
			requireV1Error(t, r, c.status, c.code, c.field)
		}
		r = do(http.MethodPost, "/v1/gift-cards", map[string]any{"amount": 10.001, "count": 1001})
		requireV1Error(t, r, http.StatusUnprocessableEntity, "validation_error", "count", "count", "amount")

		r = do(http.MethodPost, "/v1/gift-cards/"+a.GiftCard.ID+"/cancel", map[string]any{"reason": "perdido"})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		require.Contains(t, string(r.body), `"kind":"cancellation","amount":-125.50,"balance_after":0.00`)
		requireV1Error(t, do(http.MethodPost, "/v1/gift-cards/"+a.GiftCard.ID+"/load", map[string]any{"amount": 1, "load_id": "RECARGA-3"}),
			http.StatusConflict, "gift_card_cancelled", "")
		require.Equal(t, http.StatusForbidden, e.ptsDo(t, http.MethodPost, "/v1/gift-cards", e.tokenFor(t, ptsScopeRead), map[string]any{"amount": 1}).status)
	})
}

// TestGiftCardGuessBurst: 400 balance lookups by guessed codes sent at
// once by one client get exactly the client's quota of answers (404); the
// rest are 429 with Retry-After. Over the quota even a code that exists
// waits for the window: the client's answers tell nothing of the codes.
func TestGiftCardGuessBurst(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := ptsSetup(t, db)
		token := e.tokenFor(t, ptsScopeRead)
		const lookups = 400
		limit := giftcards.GiftCardGuessesPerClient.Limit
		require.Less(t, limit, lookups)
		bodies := make([][]byte, lookups)
		for i := range bodies {
			var err error
			bodies[i], err = json.Marshal(map[string]string{"code": giftcard.FormatCode(giftcard.NewCode())})
			require.NoError(t, err)
		}
		answers := burst(e.srv, token, "/v1/gift-cards/lookup", bodies)
		require.Equal(t, map[string]int{
			"404 not_found":                   limit,
			"429 gift_card_attempts_exceeded": lookups - limit,
		}, answers)

		issued, err := e.app.GiftCards.IssueGiftCards(viewer.TenantContext(context.Background(), e.tenantID),
			giftcards.IssueInput{Amount: new(decimal.NewFromInt(10))})
		require.NoError(t, err)
		r := e.ptsDo(t, http.MethodPost, "/v1/gift-cards/lookup", token, map[string]any{"code": issued.Cards[0].Code})
		require.Equal(t, http.StatusTooManyRequests, r.status, "over the quota, every lookup waits for the window: %s", r.body)
	})
}

// TestGiftCardsOverGraphQL: the mutations and queries call the same
// operations: a card issued with its code, found by it, loaded, bound and
// then among the customer's wallets, its entries read through the card.
func TestGiftCardsOverGraphQL(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := ptsSetup(t, db)
		cust := e.ptsCustomer(t, e.tenantID, "Helena")
		token := e.tokenFor(t, "customers:read", ptsScopeRead, ptsScopeWrite)
		gql := func(query string, vars map[string]any) map[string]any {
			t.Helper()
			body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
			require.NoError(t, err)
			r := apiRaw(t, e.srv, http.MethodPost, "/graphql", token, "application/json", string(body))
			require.Equal(t, http.StatusOK, r.status)
			require.NotContains(t, string(r.body), `"errors"`, "%s", r.body)
			var out struct{ Data map[string]any }
			require.NoError(t, json.Unmarshal(r.body, &out))
			return out.Data
		}
		issued := gql(`mutation { issueGiftCards(input: {amount: "40.00", note: "Dia das mães"}) { batchID cards { code giftCard { id status balance } } } }`, nil)
		card := issued["issueGiftCards"].(map[string]any)["cards"].([]any)[0].(map[string]any)
		id := card["giftCard"].(map[string]any)["id"].(string)
		require.Equal(t, "40.00", card["giftCard"].(map[string]any)["balance"])

		found := gql(`query($code: String!) { giftCardByCode(code: $code) { id } }`, map[string]any{"code": card["code"]})
		require.Equal(t, id, found["giftCardByCode"].(map[string]any)["id"])
		loaded := gql(`mutation($id: ID!) { loadGiftCard(id: $id, input: {amount: "2.50", loadID: "L-1"}) { replayed giftCard { balance loaded } entry { kind amount balanceAfter } } }`,
			map[string]any{"id": id})
		require.Equal(t, map[string]any{"replayed": false, "giftCard": map[string]any{"balance": "42.50", "loaded": "2.50"},
			"entry": map[string]any{"kind": "load", "amount": "2.50", "balanceAfter": "42.50"}}, loaded["loadGiftCard"])
		gql(`mutation($id: ID!, $c: ID!) { bindGiftCard(id: $id, customerID: $c) { id } }`, map[string]any{"id": id, "c": cust})
		wallets := gql(`query($c: ID!) { node(id: $c) { ... on Customer { wallets { unit balance giftCard { id codeLast4 } }
			giftCards { totalCount edges { node { entries { totalCount } } } } } } }`, map[string]any{"c": cust})
		node := wallets["node"].(map[string]any)
		require.Equal(t, []any{
			map[string]any{"unit": "cashback", "balance": "0.00", "giftCard": nil},
			map[string]any{"unit": "gift_card", "balance": "42.50", "giftCard": map[string]any{"id": id, "codeLast4": card["code"].(string)[20:]}},
		}, node["wallets"])
		require.Equal(t, 1.0, node["giftCards"].(map[string]any)["totalCount"])
		page := gql(`{ giftCards(where: {status: active}) { totalCount } }`, nil)
		require.Equal(t, 1.0, page["giftCards"].(map[string]any)["totalCount"])
	})
}
