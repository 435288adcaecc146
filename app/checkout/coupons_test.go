package checkout_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/app/checkout"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/eligibility"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/coupon"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// validateWithCode validates the one-item cart of R$ 100 with a coupon code.
func (e *rdmEnv) validateWithCode(customerID, code string) (*checkout.Validation, error) {
	return e.app.Checkout.ValidateCart(e.ctx, checkout.ValidateInput{
		CustomerID: customerID, Channel: "pdv", CouponCode: code,
		Cart: eligibility.Cart{Items: []eligibility.Item{{
			SKU: "SKU-1", Category: "bebidas", Quantity: decimal.NewFromInt(2), UnitPrice: decimal.NewFromInt(50),
		}}},
	})
}

func (e *rdmEnv) codeCampaign(t *testing.T, codes []string, maxUses int) *ent.Campaign {
	t.Helper()
	camp := e.campaign(t, func(in *campaigns.CampaignInput) { in.RequiresCode = true })
	added, err := e.app.Campaigns.AddCoupons(e.ctx, campaigns.CouponsInput{CampaignID: camp.ID, Codes: codes, MaxUses: maxUses})
	require.NoError(t, err)
	require.Equal(t, len(codes), added.Created)
	return camp
}

// TestCouponUsesConcurrent: 500 customers validate with one code and redeem
// at once: a single-use code serves exactly one, a code of 3 uses exactly
// three; the others are refused (coupon_code_used) having taken nothing,
// and a rollback gives the use back.
func TestCouponUsesConcurrent(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		const customers = 500
		e := rdmSetup(t, db)
		ids := e.customers(t, customers)
		for _, tc := range []struct {
			code    string
			maxUses int
		}{{"NATAL-UNICO", 1}, {"natal-tres", 3}} {
			camp := e.codeCampaign(t, []string{tc.code}, tc.maxUses)
			tokens := make([]string, len(ids))
			errs := make([]error, len(ids))
			var wg sync.WaitGroup
			next := make(chan int)
			for range 8 {
				wg.Go(func() {
					for i := range next {
						v, err := e.validateWithCode(ids[i], tc.code)
						if err == nil && (len(v.Eligible) != 1 || v.Eligible[0].Campaign.ID != camp.ID) {
							err = fmt.Errorf("customer %d: campaign not eligible: %+v", i, v.Ineligible)
						}
						if err == nil {
							tokens[i] = v.Token
						}
						errs[i] = err
					}
				})
			}
			for i := range ids {
				next <- i
			}
			close(next)
			wg.Wait()
			for _, err := range errs {
				require.NoError(t, err)
			}
			attempts := make([]rdmAttempt, len(ids))
			for i, id := range ids {
				attempts[i] = rdmAttempt{customerID: id, orderID: fmt.Sprintf("order-%s-%d", tc.code, i), token: tokens[i]}
			}
			out := e.race(t, camp.ID, attempts)
			t.Logf("%s: %d concurrent redeems of a code of %d uses in %v", db.Dialect, customers, tc.maxUses, out.duration)
			require.Len(t, out.ok, tc.maxUses)
			for _, err := range out.errs {
				rdmRequireCode(t, err, apperr.KindConflict, "coupon_code_used", "coupon_code")
			}
			c, err := db.Ent.Coupon.Query().Where(coupon.CampaignID(camp.ID)).Only(e.ctx)
			require.NoError(t, err)
			require.Equal(t, tc.maxUses, c.Uses)
			require.Equal(t, "used", campaigns.CouponStatus(c))
			rows, counter := e.counts(t, camp.ID)
			require.Equal(t, tc.maxUses, rows)
			require.Equal(t, tc.maxUses, counter, "the refused redemptions took nothing from the count")
			require.Equal(t, c.ID, *out.ok[0].CouponID)

			// Used up: validate refuses the code; a rollback gives a use back.
			_, err = e.validateWithCode(ids[0], tc.code)
			rdmRequireCode(t, err, apperr.KindInvalid, "coupon_code_used", "coupon_code")
			_, err = e.app.Loyalty.RollbackRedemption(e.ctx, out.ok[0].ID, "order cancelled")
			require.NoError(t, err)
			v, err := e.validateWithCode(ids[1], strings.ToLower(" "+tc.code+" "))
			require.NoError(t, err, "codes match without regard to case")
			_, err = e.redeem(camp.ID, ids[1], "order-again-"+tc.code, v.Token)
			require.NoError(t, err)
		}
	})
}

// TestCouponCodes: generation (count, prefix, length, alphabet), import
// with its problems, the campaign a code unlocks, and the guesses quota.
func TestCouponCodes(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := rdmSetup(t, db)
		camp := e.campaign(t, func(in *campaigns.CampaignInput) { in.RequiresCode = true })
		plain := e.campaign(t, nil)

		added, err := e.app.Campaigns.AddCoupons(e.ctx, campaigns.CouponsInput{CampaignID: camp.ID,
			Generate: &campaigns.CouponGeneration{Count: 1200, Prefix: "bf-", Length: 10}})
		require.NoError(t, err)
		require.Equal(t, 1200, added.Created)
		codes, err := db.Ent.Coupon.Query().Where(coupon.CampaignID(camp.ID)).All(e.ctx)
		require.NoError(t, err)
		require.Len(t, codes, 1200)
		seen := map[string]bool{}
		for _, c := range codes {
			require.Len(t, c.Code, 13)
			require.True(t, strings.HasPrefix(c.Code, "BF-"), c.Code)
			require.Equal(t, -1, strings.IndexAny(c.Code[3:], "0O1IL"), "no look-alikes: %s", c.Code)
			require.False(t, seen[c.Code])
			seen[c.Code] = true
			require.Equal(t, 1, c.MaxUses)
		}
		digits, err := e.app.Campaigns.AddCoupons(e.ctx, campaigns.CouponsInput{CampaignID: camp.ID, MaxUses: 5,
			Generate: &campaigns.CouponGeneration{Count: 3, Length: 12, Alphabet: "0123456789"}})
		require.NoError(t, err)
		require.Equal(t, 3, digits.Created)

		imported, err := e.app.Campaigns.AddCoupons(e.ctx, campaigns.CouponsInput{CampaignID: camp.ID,
			Codes: []string{"VIP-ANA", "vip-ana", "x", codes[0].Code, "VIP-BIA", "com espaço"}})
		require.NoError(t, err)
		require.Equal(t, 2, imported.Created)
		require.Equal(t, []apperr.FieldError{
			{Field: "codes[1]", Message: "repeats an earlier code of the list"},
			{Field: "codes[2]", Message: "must be 3 to 64 letters, digits, hyphens or underscores, starting with a letter or digit"},
			{Field: "codes[5]", Message: "must be 3 to 64 letters, digits, hyphens or underscores, starting with a letter or digit"},
			{Field: "codes[3]", Message: "is already a code of this tenant"},
		}, imported.Problems)

		for _, bad := range []struct {
			in    campaigns.CouponsInput
			field string
		}{
			{campaigns.CouponsInput{CampaignID: camp.ID}, "generate"},
			{campaigns.CouponsInput{CampaignID: camp.ID, Codes: []string{"A1B"}, Generate: &campaigns.CouponGeneration{Count: 1}}, "codes"},
			{campaigns.CouponsInput{CampaignID: camp.ID, Generate: &campaigns.CouponGeneration{Count: 0}}, "generate.count"},
			{campaigns.CouponsInput{CampaignID: camp.ID, Generate: &campaigns.CouponGeneration{Count: 100_001}}, "generate.count"},
			{campaigns.CouponsInput{CampaignID: camp.ID, Generate: &campaigns.CouponGeneration{Count: 10, Alphabet: "AAB"}}, "generate.alphabet"},
			{campaigns.CouponsInput{CampaignID: camp.ID, Generate: &campaigns.CouponGeneration{Count: 10, Alphabet: "ab#"}}, "generate.alphabet"},
			{campaigns.CouponsInput{CampaignID: camp.ID, Generate: &campaigns.CouponGeneration{Count: 100, Length: 6, Alphabet: "0123456789"}}, "generate.length"},
			{campaigns.CouponsInput{CampaignID: camp.ID, Generate: &campaigns.CouponGeneration{Count: 1, Prefix: "com espaço"}}, "generate.prefix"},
			{campaigns.CouponsInput{CampaignID: camp.ID, Codes: []string{"A1B"}, MaxUses: -1}, "max_uses"},
		} {
			_, err := e.app.Campaigns.AddCoupons(e.ctx, bad.in)
			rdmRequireCode(t, err, apperr.KindInvalid, "validation_error", bad.field)
		}
		_, err = e.app.Campaigns.AddCoupons(e.ctx, campaigns.CouponsInput{CampaignID: plain.ID, Codes: []string{"A1B"}})
		rdmRequireCode(t, err, apperr.KindConflict, "campaign_requires_no_code", "campaign_id")

		// Without its code the campaign is ineligible; with it, eligible.
		ids := e.customers(t, 12)
		v, err := e.validateWithCode(ids[0], "")
		require.NoError(t, err)
		require.Len(t, v.Eligible, 1)
		require.Equal(t, plain.ID, v.Eligible[0].Campaign.ID)
		require.Equal(t, eligibility.CouponRequired, v.Ineligible[0].Reason)
		v, err = e.validateWithCode(ids[0], "vip-bia")
		require.NoError(t, err)
		require.Len(t, v.Eligible, 2)

		// Guesses: ten unknown codes of one customer, then every code of
		// theirs is refused; another customer of the client goes on.
		for i := range campaigns.CouponGuessesPerCustomer.Limit {
			_, err := e.validateWithCode(ids[1], fmt.Sprintf("GUESS-%d", i))
			rdmRequireCode(t, err, apperr.KindInvalid, "coupon_code_invalid", "coupon_code")
		}
		_, err = e.validateWithCode(ids[1], "VIP-BIA")
		rdmRequireCode(t, err, apperr.KindRateLimited, "coupon_attempts_exceeded", "coupon_code")
		_, err = e.validateWithCode(ids[1], "")
		require.NoError(t, err, "a cart without a code is served")
		_, err = e.validateWithCode(ids[2], "VIP-BIA")
		require.NoError(t, err)
	})
}
