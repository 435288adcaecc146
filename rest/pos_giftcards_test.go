package rest

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// posGiftCardLine is a sale line selling the inactive card of code at
// price.
func posGiftCardLine(id, code, price string) map[string]any {
	return map[string]any{"id": id, "gtin": "7890000000507", "description": "Cartão-presente", "unitPrice": posN(price),
		"quantity": posN("1"), "giftCard": map[string]any{"code": code}}
}

// TestPOSGiftCardSold: pre-printed cards issued inactive over /v1 are sold
// at the till by their code. Until the sale is processed a card holds
// nothing and moves nothing; processing activates each once (a second run
// and a resend change nothing), and the cards' value earns no points.
// Returning an unspent card's line cancels the card and takes back no
// points; a spent card no longer comes back. A card already sold, active,
// at another price or on a discounted line is refused.
func TestPOSGiftCardSold(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db)
		token := e.tokenFor(t, ptsScopeRead, ptsScopeWrite)
		do := func(method, path string, body any) apiResp { return apiDo(t, e.srv, method, path, token, body) }
		doc := posCPF()
		cust := e.posCustomer(t, doc, posCust{name: "Lia Prado"})

		issue := func(inactive bool, n int) (codes, ids []string) {
			r := do(http.MethodPost, "/v1/gift-cards", map[string]any{"count": n, "amount": 50, "inactive": inactive})
			require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
			var issued struct {
				Data []struct {
					Code     string         `json:"code"`
					GiftCard giftCardAnswer `json:"gift_card"`
				} `json:"data"`
			}
			require.NoError(t, json.Unmarshal(r.body, &issued))
			for _, d := range issued.Data {
				codes, ids = append(codes, d.Code), append(ids, d.GiftCard.ID)
			}
			return codes, ids
		}
		card := func(id string) giftCardAnswer {
			r := do(http.MethodGet, "/v1/gift-cards/"+id, nil)
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			var c giftCardAnswer
			require.NoError(t, json.Unmarshal(r.body, &c))
			return c
		}
		codes, ids := issue(true, 2)
		activeCodes, activeIDs := issue(false, 1)

		// R$ 100.00 of goods and two cards of R$ 50.00.
		body := posSaleBody(posN("900"), map[string]any{"id": doc, "type": "CPF"})
		posSet(body, "sale.items", append(body["sale"].(map[string]any)["items"].([]any),
			posGiftCardLine("3", codes[0], "50.00"), posGiftCardLine("4", codes[1], "50.00")))
		for _, f := range []string{"sale.amount", "sale.amountPayable", "sale.payments.0.amount"} {
			posSet(body, f, posN("200.00"))
		}

		t.Run("refused lines", func(t *testing.T) {
			bad := func(mutate func(line map[string]any)) map[string]any {
				b := posSaleBody(posN("901"), map[string]any{"id": doc, "type": "CPF"})
				line := posGiftCardLine("1", codes[0], "50.00")
				mutate(line)
				posSet(b, "sale.items", []any{line})
				price := decimal.RequireFromString(string(line["unitPrice"].(json.Number)))
				value := posN(price.Mul(decimal.RequireFromString(string(line["quantity"].(json.Number)))).StringFixed(2))
				for _, f := range []string{"sale.amount", "sale.amountPayable", "sale.payments.0.amount"} {
					posSet(b, f, value)
				}
				return b
			}
			posRequireProblem(t, e.posPost(t, "/sales", bad(func(l map[string]any) { l["giftCard"] = map[string]any{"code": activeCodes[0]} })),
				http.StatusUnprocessableEntity, "gift-card-not-sellable")
			posRequireProblem(t, e.posPost(t, "/sales", bad(func(l map[string]any) { l["unitPrice"] = posN("40.00") })),
				http.StatusUnprocessableEntity, "gift-card-not-sellable")
			posRequireProblem(t, e.posPost(t, "/sales", bad(func(l map[string]any) {
				l["giftCard"] = map[string]any{"code": "0000-0000-0000-0000-0000"}
			})), http.StatusNotFound, "resource-not-found")
			posRequireProblem(t, e.posPost(t, "/sales", bad(func(l map[string]any) {
				l["quantity"], l["unitPrice"] = posN("2"), posN("25.00")
			})), http.StatusBadRequest, "validation-error", "sale.items[0].quantity")
			posRequireProblem(t, e.posPost(t, "/sales", bad(func(l map[string]any) { l["giftCard"] = map[string]any{"code": ""} })),
				http.StatusBadRequest, "validation-error", "sale.items[0].giftCard.code")
		})

		posRequireAccepted(t, e.posPost(t, "/sales", body), "900", map[string]any{"id": doc, "type": "CPF"})
		saleID := e.posSaleID(t, "900")
		posRequireProblem(t, e.posPost(t, "/sales", posSet(posSaleBody(posN("902"), nil), "sale.items",
			[]any{posGiftCardLine("1", codes[0], "100.00")})), http.StatusUnprocessableEntity, "gift-card-not-sellable")

		// Registered, not processed: the cards hold nothing and move nothing.
		for _, id := range ids {
			c := card(id)
			require.Equal(t, "inactive", c.Status)
			require.Equal(t, "0.00", c.Balance.String())
		}
		r := do(http.MethodPost, "/v1/gift-cards/"+ids[1]+"/transfer", map[string]any{"to_gift_card_id": activeIDs[0], "transfer_id": "TRF-EARLY"})
		require.Equal(t, http.StatusConflict, r.status, "an inactive card moves nothing: %s", r.body)
		require.Contains(t, string(r.body), "gift_card_inactive")
		r = do(http.MethodPost, "/v1/gift-cards/lookup", map[string]any{"code": codes[0]})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		require.Contains(t, string(r.body), `"status":"inactive"`)

		posWork(t, e, saleID)
		posWork(t, e, saleID)
		posRequireAccepted(t, e.posPost(t, "/sales", body), "900", map[string]any{"id": doc, "type": "CPF"})
		for _, id := range ids {
			c := card(id)
			require.Equal(t, "active", c.Status)
			require.Equal(t, "50.00", c.Balance.String(), "activated once, with its face value")
		}
		got := e.posSale(t, "900")
		require.Equal(t, "PROCESSED", got["status"])
		require.Equal(t, posN("100"), got["pointsCredited"], "the goods earn; the cards do not")
		bal, _, _ := e.posBalance(t, cust.ID)
		require.Equal(t, int64(100), bal)
		require.Len(t, e.posEvents(t, "gift_card.activated"), 2)

		// The second card is spent: it no longer comes back. The first
		// comes back whole: cancelled, no points taken back.
		r = do(http.MethodPost, "/v1/gift-cards/"+ids[1]+"/transfer", map[string]any{"to_gift_card_id": activeIDs[0], "transfer_id": "TRF-1", "amount": 10})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		posRequireProblem(t, e.posPost(t, "/sales/900/returns", posReturnBody("R1", "4", "1")),
			http.StatusUnprocessableEntity, "gift-card-not-returnable")
		r2 := e.posPost(t, "/sales/900/returns", posReturnBody("R2", "3", "1"))
		require.Equal(t, http.StatusAccepted, r2.status, "%s", r2.body)
		require.Empty(t, posWorkReturns(t, e))
		require.Equal(t, "cancelled", card(ids[0]).Status)
		require.Equal(t, "0.00", card(ids[0]).Balance.String())
		bal, _, _ = e.posBalance(t, cust.ID)
		require.Equal(t, int64(100), bal, "a gift card returned takes back no points")
		got = e.posSale(t, "900")
		require.Equal(t, "PARTIALLY_RETURNED", got["status"])
	})
}
