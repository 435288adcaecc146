package checkout_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/app/checkout"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/redemption"
	"github.com/fideliza/fideliza/ent/validationtoken"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// TestRedeemValidationToken: a token is good for five minutes on the App's
// clock and serves a single order.
func TestRedeemValidationToken(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := rdmSetup(t, db)
		first := e.campaign(t, nil)
		second := e.campaign(t, func(in *campaigns.CampaignInput) {
			in.Name = "Frete grátis"
			in.Discount.Mode, in.Discount.Value = "free_shipping", nil
		})
		cust := e.customers(t, 2)

		t.Run("expired at five minutes", func(t *testing.T) {
			tok := e.validate(t, cust[0], first.ID)
			e.clock.Advance(checkout.ValidationTTL)
			_, err := e.redeem(first.ID, cust[0], "order-expired", tok)
			rdmRequireCode(t, err, apperr.KindInvalid, "validation_token_expired", "validation_token")
		})

		t.Run("valid just before five minutes", func(t *testing.T) {
			tok := e.validate(t, cust[0], first.ID)
			e.clock.Advance(checkout.ValidationTTL - time.Microsecond)
			red, err := e.redeem(first.ID, cust[0], "order-in-time", tok)
			require.NoError(t, err)
			require.Equal(t, "order-in-time", red.OrderID)
			require.True(t, red.DiscountAmount.Equal(decimal.NewFromInt(10)), red.DiscountAmount.String())
		})

		t.Run("one order per token", func(t *testing.T) {
			tok := e.validate(t, cust[0], first.ID, second.ID)
			_, err := e.redeem(first.ID, cust[0], "order-A", tok)
			require.NoError(t, err)
			// The same order may take the token's other campaign.
			_, err = e.redeem(second.ID, cust[0], "order-A", tok)
			require.NoError(t, err)
			// Another order may not, whatever the campaign.
			_, err = e.redeem(second.ID, cust[0], "order-B", tok)
			rdmRequireCode(t, err, apperr.KindInvalid, "validation_token_used", "validation_token")
			_, err = e.redeem(first.ID, cust[0], "order-B", tok)
			rdmRequireCode(t, err, apperr.KindInvalid, "validation_token_used", "validation_token")
			// The same order and campaign again is a conflict.
			_, err = e.redeem(first.ID, cust[0], "order-A", tok)
			rdmRequireCode(t, err, apperr.KindConflict, "already_redeemed", "campaign_id")
			n, err := e.db.Ent.Redemption.Query().Where(redemption.OrderID("order-B")).Count(e.ctx)
			require.NoError(t, err)
			require.Zero(t, n)
		})

		t.Run("concurrent orders on one token: one wins", func(t *testing.T) {
			tok := e.validate(t, cust[1], first.ID)
			attempts := make([]rdmAttempt, 10)
			for i := range attempts {
				attempts[i] = rdmAttempt{customerID: cust[1], orderID: fmt.Sprintf("race-%d", i), token: tok}
			}
			out := e.race(t, first.ID, attempts)
			require.Len(t, out.ok, 1)
			for _, err := range out.errs {
				e, ok := apperr.As(err)
				require.True(t, ok, "%v", err)
				require.Equal(t, "validation_token_used", e.Code, "one code for one situation, on both databases")
			}
			n, err := e.db.Ent.Redemption.Query().Where(redemption.CustomerID(cust[1])).Count(e.ctx)
			require.NoError(t, err)
			require.Equal(t, 1, n)
		})

		t.Run("concurrent retries of one order: one redemption", func(t *testing.T) {
			tok := e.validate(t, cust[1], second.ID)
			attempts := make([]rdmAttempt, 10)
			for i := range attempts {
				attempts[i] = rdmAttempt{customerID: cust[1], orderID: "retried", token: tok}
			}
			out := e.race(t, second.ID, attempts)
			require.Len(t, out.ok, 1)
			for _, err := range out.errs {
				rdmRequireCode(t, err, apperr.KindConflict, "already_redeemed", "campaign_id")
			}
			require.Equal(t, 1, e.count(t, redemption.OrderID("retried")))
		})

		t.Run("refusals", func(t *testing.T) {
			tok := e.validate(t, cust[0], first.ID)
			_, err := e.redeem(first.ID, cust[0], "o", "vtk_unknown")
			rdmRequireCode(t, err, apperr.KindInvalid, "validation_error", "validation_token")
			_, err = e.redeem(first.ID, cust[1], "o", tok)
			rdmRequireCode(t, err, apperr.KindInvalid, "validation_error", "customer_id")
			other := e.campaign(t, func(in *campaigns.CampaignInput) { in.Name = "Depois" })
			_, err = e.redeem(other.ID, cust[0], "o", tok)
			rdmRequireCode(t, err, apperr.KindInvalid, "campaign_not_eligible", "campaign_id")
			_, err = e.app.Campaigns.PauseCampaign(e.ctx, first.ID)
			require.NoError(t, err)
			_, err = e.redeem(first.ID, cust[0], "o", tok)
			rdmRequireCode(t, err, apperr.KindInvalid, "campaign_not_active", "campaign_id")
			_, err = e.app.Campaigns.ResumeCampaign(e.ctx, first.ID)
			require.NoError(t, err)
			tok = e.validate(t, cust[0], first.ID)
			_, err = e.app.Campaigns.EndCampaign(e.ctx, first.ID)
			require.NoError(t, err)
			_, err = e.redeem(first.ID, cust[0], "o", tok)
			rdmRequireCode(t, err, apperr.KindInvalid, "campaign_not_active", "campaign_id")
		})
	})
}

// TestRedeemIsOneTransaction: when anything fails after the redemption was
// written (here: storing the answer of an Idempotency-Key), the
// redemption, the campaign's count, the token's order and the cashback job
// all roll back.
func TestRedeemIsOneTransaction(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := rdmSetup(t, db)
		camp := e.campaign(t, func(in *campaigns.CampaignInput) {
			in.Type = "cashback"
			in.Discount.CreditAfterDays = rdmInt(7)
			in.Limits = &campaigns.LimitsInput{Total: rdmInt(1)}
		})
		cust := e.customers(t, 1)[0]
		tok := e.validate(t, cust, camp.ID)
		// The database refuses to store the key's answer.
		refuse, allow := []string{"CREATE TRIGGER refuse_keys BEFORE INSERT ON idempotency_keys BEGIN SELECT RAISE(ABORT, 'keys refused'); END"},
			[]string{"DROP TRIGGER refuse_keys"}
		if db.Dialect == dialect.Postgres {
			refuse = []string{"CREATE FUNCTION refuse_keys() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'keys refused'; END $$",
				"CREATE TRIGGER refuse_keys BEFORE INSERT ON idempotency_keys FOR EACH ROW EXECUTE FUNCTION refuse_keys()"}
			allow = []string{"DROP TRIGGER refuse_keys ON idempotency_keys"}
		}
		for _, q := range refuse {
			_, err := db.SQL.Exec(q)
			require.NoError(t, err)
		}
		in := checkout.RedeemInput{CampaignID: camp.ID, CustomerID: cust, OrderID: "order-1", Token: tok, AmountPaid: decimal.NewFromInt(100)}
		_, _, err := e.app.Checkout.RedeemCampaign(e.ctx, in, &checkout.Idempotency{Key: "k-1", RequestHash: "h"})
		require.ErrorContains(t, err, "keys refused")
		for _, q := range allow {
			_, err := db.SQL.Exec(q)
			require.NoError(t, err)
		}

		rows, counter := e.counts(t, camp.ID)
		require.Zero(t, rows)
		require.Zero(t, counter)
		var jobs int
		require.NoError(t, db.SQL.QueryRow(`SELECT count(*) FROM river_job WHERE kind = 'credit_cashback'`).Scan(&jobs))
		require.Zero(t, jobs, "the cashback job rolls back with its redemption")
		bound, err := e.db.Ent.ValidationToken.Query().Where(validationtoken.OrderIDNotNil()).Count(e.ctx)
		require.NoError(t, err)
		require.Zero(t, bound)

		// The token, the limit and the key are all still there to use.
		red, replay, err := e.app.Checkout.RedeemCampaign(e.ctx, in, &checkout.Idempotency{Key: "k-1", RequestHash: "h"})
		require.NoError(t, err)
		require.Nil(t, replay)
		require.NoError(t, db.SQL.QueryRow(`SELECT count(*) FROM river_job WHERE kind = 'credit_cashback'`).Scan(&jobs))
		require.Equal(t, 1, jobs)
		rows, counter = e.counts(t, camp.ID)
		require.Equal(t, 1, rows)
		require.Equal(t, 1, counter)
		require.True(t, red.CashbackAmount.Equal(decimal.NewFromInt(10)), red.CashbackAmount.String())
	})
}

// TestRedeemIdempotencyKeyLifetime: a key answers with its first result for
// 24 hours and is free again afterwards.
func TestRedeemIdempotencyKeyLifetime(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := rdmSetup(t, db)
		camp := e.campaign(t, func(in *campaigns.CampaignInput) { in.EndsAt = rdmTime(rdmT0.AddDate(0, 2, 0)) })
		cust := e.customers(t, 1)[0]
		redeem := func(order, tok, hash string) (*ent.Redemption, *checkout.Redeemed, error) {
			return e.app.Checkout.RedeemCampaign(e.ctx, checkout.RedeemInput{
				CampaignID: camp.ID, CustomerID: cust, OrderID: order, Token: tok, AmountPaid: decimal.NewFromInt(100),
			}, &checkout.Idempotency{Key: "same-key", RequestHash: hash})
		}
		tok := e.validate(t, cust, camp.ID)
		first, replay, err := redeem("order-1", tok, "h1")
		require.NoError(t, err)
		require.Nil(t, replay)

		e.clock.Advance(23 * time.Hour)
		_, replay, err = redeem("order-1", tok, "h1")
		require.NoError(t, err)
		require.NotNil(t, replay)
		answer, err := checkout.RedeemedOf(first)
		require.NoError(t, err)
		require.Equal(t, first.ID, replay.RedemptionID)
		require.True(t, answer.RedeemedAt.Equal(replay.RedeemedAt))
		replay.RedeemedAt = answer.RedeemedAt
		want, err := json.Marshal(answer)
		require.NoError(t, err)
		got, err := json.Marshal(replay)
		require.NoError(t, err)
		require.JSONEq(t, string(want), string(got), "the replay answers what the first call did")
		_, _, err = redeem("order-2", tok, "h2")
		rdmRequireCode(t, err, apperr.KindInvalid, "idempotency_key_reused", "Idempotency-Key")

		// A day later the key is forgotten, even before the purge job ran.
		e.clock.Advance(2 * time.Hour)
		tok2 := e.validate(t, cust, camp.ID)
		second, replay, err := redeem("order-2", tok2, "h2")
		require.NoError(t, err)
		require.Nil(t, replay)
		require.NotEqual(t, first.ID, second.ID)
	})
}

func rdmTime(t time.Time) *time.Time { return &t }

// TestValidationTokensSigned: validate writes nothing, and each validation
// gets its own token; a token redeems once, for one order, however many
// requests present it at once (its row is written by the one that wins); a
// token altered, cut, of another tenant or no token at all is refused as an
// unknown token (422 validation_error), never a 500.
func TestValidationTokensSigned(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		const n = 16
		e := rdmSetup(t, db)
		camp := e.campaign(t, nil)
		ids := e.customers(t, n)
		tokens := e.validateEach(t, ids, camp.ID)
		distinct := map[string]bool{}
		for _, tok := range tokens {
			distinct[tok] = true
		}
		require.Len(t, distinct, n, "one token per validation")
		rows := func() int {
			c, err := db.Ent.ValidationToken.Query().Where(validationtoken.CustomerIDIn(ids...)).Count(e.ctx)
			require.NoError(t, err)
			return c
		}
		require.Zero(t, rows(), "validate writes nothing")

		t.Run("refused", func(t *testing.T) {
			tok := tokens[0]
			middle := len(tok) / 2
			flip := byte('A')
			if tok[middle] == flip {
				flip = 'B'
			}
			other := rdmSetup(t, db)
			otherCamp := other.campaign(t, nil)
			foreign := other.validate(t, other.customers(t, 1)[0], otherCamp.ID)
			for name, bad := range map[string]string{
				"altered":           tok[:middle] + string(flip) + tok[middle+1:],
				"cut":               tok[:len(tok)-1],
				"signature only":    "vtk_" + tok[len(tok)-43:],
				"prefix only":       "vtk_",
				"not base64":        "vtk_#!",
				"without prefix":    tok[len("vtk_"):],
				"of another tenant": foreign,
			} {
				_, err := e.redeem(camp.ID, ids[0], "order-bad", bad)
				rdmRequireCode(t, err, apperr.KindInvalid, "validation_error", "validation_token")
				require.Contains(t, err.Error(), "is not a validation token of this tenant", name)
			}
		})

		t.Run("one token, many requests: one order", func(t *testing.T) {
			attempts := make([]rdmAttempt, n)
			for i := range attempts {
				attempts[i] = rdmAttempt{customerID: ids[0], orderID: fmt.Sprintf("order-%d", i), token: tokens[0]}
			}
			out := e.race(t, camp.ID, attempts)
			require.Len(t, out.ok, 1)
			for _, err := range out.errs {
				rdmRequireCode(t, err, apperr.KindInvalid, "validation_token_used", "validation_token")
			}
			row, err := db.Ent.ValidationToken.Query().Where(validationtoken.CustomerID(ids[0])).Only(e.ctx)
			require.NoError(t, err)
			require.Equal(t, out.ok[0].OrderID, *row.OrderID)
			require.Equal(t, row.ID, *out.ok[0].ValidationTokenID)
		})

		t.Run("each token once", func(t *testing.T) {
			attempts := make([]rdmAttempt, n-1)
			for i := range attempts {
				attempts[i] = rdmAttempt{customerID: ids[i+1], orderID: fmt.Sprintf("own-%d", i), token: tokens[i+1]}
			}
			require.Empty(t, e.race(t, camp.ID, attempts).errs)
			require.Equal(t, n, rows())
			_, err := e.redeem(camp.ID, ids[1], "own-x", tokens[0])
			rdmRequireCode(t, err, apperr.KindInvalid, "validation_error", "customer_id")
		})
	})
}
