package rest

import (
	"net/http"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/giftcards"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/domain/wallet"
	"github.com/fideliza/fideliza/ent/giftcardentry"
	"github.com/fideliza/fideliza/ent/walletentry"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// TestPOSWalletPayments: the till holds the customer's cashback and a gift
// card's balance (by its code); a sale paying with both holds, sent twice
// and processed twice, debits each exactly once (cashback.spent,
// gift_card.redeemed); an offline sale cannot pay with them, a payment
// without its hold is refused, a hold taken cannot be released; a return of
// a quarter of the sale gives each wallet back a quarter of what it paid,
// the cancellation the rest, each once.
func TestPOSWalletPayments(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db)
		doc := posCPF()
		cu := e.posCustomer(t, doc, posCust{name: "Ana Souza"})
		w := wallet.Wallets{Dialect: db.Dialect, Now: time.Now}
		require.NoError(t, db.InTx(posSys(), func(tx storage.Tx) error {
			_, err := w.Credit(e.posTenantCtx(), tx.Ent, wallet.Move{CustomerID: cu.ID, Unit: wallet.Cashback, Cents: 3000,
				SourceKind: walletentry.SourceKindOrder, SourceID: new("seed"), Reason: "seed"})
			return err
		}))
		issued, err := e.app.GiftCards.IssueGiftCards(e.posTenantCtx(), giftcards.IssueInput{Amount: new(decimal.RequireFromString("50.00"))})
		require.NoError(t, err)
		card := issued.Cards[0]
		_, err = e.app.GiftCards.BindGiftCard(e.posTenantCtx(), card.Card.ID, cu.ID)
		require.NoError(t, err)

		// Identify and authorize answer the cashback and the bound card.
		r := e.posPost(t, "/customers/identify", posIdentifyBody("s-0", doc, "CPF"))
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		require.Equal(t, map[string]any{"available": posN("30.00"), "balance": posN("30.00"), "maxAmount": posN("30.00"),
			"minAmount": posN("0.00")}, r.obj(t)["cashback"])
		require.Equal(t, []any{map[string]any{"available": posN("50.00"), "balance": posN("50.00"), "id": card.Card.ID,
			"last4": card.Card.CodeLast4, "expiresAt": timestamp(card.Card.ExpiresAt)}}, r.obj(t)["giftCards"])
		r = e.posPost(t, "/discounts/authorizations", posAuthorizeBody(map[string]any{"id": doc, "type": "CPF"},
			posItem("1", posGTINA, "40.00", "1")))
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		require.Equal(t, posN("30.00"), r.obj(t)["cashback"].(map[string]any)["maxAmount"])

		hold := func(session, wal, code, amount string) posResp {
			body := map[string]any{"sessionId": session, "customer": map[string]any{"id": doc, "type": "CPF"},
				"store": map[string]any{"id": posStore}, "wallet": wal, "amount": posN(amount), "saleAmount": posN("100.00")}
			if code != "" {
				body["giftCardCode"] = code
			}
			return e.posPost(t, "/wallets/holds", body)
		}
		r = hold("s-1", "CASHBACK", "", "20.00")
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		cashbackHold := r.obj(t)["hold"].(map[string]any)["id"].(string)
		posRequireProblem(t, hold("s-2", "CASHBACK", "", "10.01"), http.StatusUnprocessableEntity, "insufficient-balance")
		r = hold("s-1", "GIFT_CARD", card.Code, "40.00")
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		require.Equal(t, card.Card.ID, r.obj(t)["hold"].(map[string]any)["giftCardId"])
		cardHold := r.obj(t)["hold"].(map[string]any)["id"].(string)
		posRequireProblem(t, hold("s-3", "GIFT_CARD", card.Code, "10.01"), http.StatusUnprocessableEntity, "insufficient-balance")
		posRequireProblem(t, hold("s-3", "GIFT_CARD", "7K3M-Q0A1-B2C3-D4E5-F6G9", "1.00"), http.StatusNotFound, "resource-not-found")

		saleBody := func(receipt, cashback, gift string) map[string]any {
			body := posSaleBody(posN(receipt), map[string]any{"id": doc, "type": "CPF"})
			body["sale"].(map[string]any)["payments"] = []any{
				map[string]any{"id": posN("1"), "amount": posN("20.00"), "method": "CASHBACK", "holdId": cashback},
				map[string]any{"id": posN("2"), "amount": posN("40.00"), "method": "GIFT_CARD", "holdId": gift},
				map[string]any{"id": posN("3"), "amount": posN("40.00"), "method": "CREDIT_CARD"},
			}
			return body
		}
		offline := saleBody("601", cashbackHold, cardHold)
		offline["sale"].(map[string]any)["offline"] = true
		posRequireProblem(t, e.posPost(t, "/sales", offline), http.StatusUnprocessableEntity, "wallet-payment-offline")
		posRequireProblem(t, e.posPost(t, "/sales", saleBody("602", cashbackHold, "")), http.StatusUnprocessableEntity, "wallet-payment-refused")
		posRequireProblem(t, e.posPost(t, "/sales", saleBody("603", cardHold, cashbackHold)), http.StatusUnprocessableEntity,
			"wallet-hold-unavailable") // each hold of the other wallet
		for range 2 {
			r = e.posPost(t, "/sales", saleBody("600", cashbackHold, cardHold))
			require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
		}
		posRequireProblem(t, e.posDo(t, posReq{method: http.MethodDelete, path: "/wallets/holds/" + cardHold}),
			http.StatusUnprocessableEntity, "wallet-hold-unavailable") // taken by sale 600
		saleID := e.posSaleID(t, "600")
		posWork(t, e, saleID)
		posWork(t, e, saleID)
		cashbackDebits, err := db.Ent.WalletEntry.Query().Where(walletentry.KindEQ(walletentry.KindDebit)).All(posSys())
		require.NoError(t, err)
		require.Len(t, cashbackDebits, 1)
		require.Equal(t, int64(-2000), cashbackDebits[0].AmountCents)
		require.Equal(t, saleID, *cashbackDebits[0].SourceID)
		cardDebits, err := db.Ent.GiftCardEntry.Query().Where(giftcardentry.KindEQ(giftcardentry.KindDebit)).All(posSys())
		require.NoError(t, err)
		require.Len(t, cardDebits, 1)
		require.Equal(t, int64(-4000), cardDebits[0].AmountCents)
		require.Equal(t, saleID, cardDebits[0].SourceID)
		require.Len(t, e.posEvents(t, outbox.CashbackSpent), 1)
		require.Len(t, e.posEvents(t, outbox.GiftCardRedeemed), 1)
		balances := func() (cashback, gift int64) {
			wal, err := db.Ent.Wallet.Query().All(posSys())
			require.NoError(t, err)
			require.Len(t, wal, 1)
			c, err := db.Ent.GiftCard.Get(posSys(), card.Card.ID)
			require.NoError(t, err)
			return wal[0].BalanceCents, c.BalanceCents
		}
		cb, gc := balances()
		require.Equal(t, [2]int64{1000, 1000}, [2]int64{cb, gc})

		// A quarter of the sale returned: a quarter of each wallet's payment
		// back, once; the cancellation the rest.
		r = e.posPost(t, "/sales/600/returns", posReturnBody("R1", "2", "2")) // 2 × R$ 12.50
		require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
		require.Empty(t, posWorkReturns(t, e))
		cb, gc = balances()
		require.Equal(t, [2]int64{1500, 2000}, [2]int64{cb, gc})
		r = e.posPost(t, "/sales/600/cancellation", posCancellationBody("C1"))
		require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
		require.Empty(t, posWorkReturns(t, e))
		cb, gc = balances()
		require.Equal(t, [2]int64{3000, 5000}, [2]int64{cb, gc}, "every cent paid given back")
		refunds, err := db.Ent.GiftCardEntry.Query().Where(giftcardentry.KindEQ(giftcardentry.KindRefund)).Count(posSys())
		require.NoError(t, err)
		require.Equal(t, 2, refunds, "one refund per return")

		// A hold released pays nothing.
		r = hold("s-4", "CASHBACK", "", "5.00")
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		released := r.obj(t)["hold"].(map[string]any)["id"].(string)
		r = e.posDo(t, posReq{method: http.MethodDelete, path: "/wallets/holds/" + released})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		require.Equal(t, "released", r.obj(t)["hold"].(map[string]any)["status"])
	})
}
