package checkout_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/apptest"
	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/app/checkout"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/eligibility"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/predicate"
	"github.com/fideliza/fideliza/ent/redemption"
	"github.com/fideliza/fideliza/ent/validationtoken"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/testclock"
	"github.com/fideliza/fideliza/viewer"
)

// The tests of redeem at the App level: limits under concurrency (a start
// barrier releases every redeem at once; the database rows are the
// verdict), the validation token's rules on a controllable clock, and the
// redemption's transaction. Helpers are prefixed rdm.

// rdmT0 is when every test starts.
var rdmT0 = time.Date(2026, 5, 4, 15, 0, 0, 0, time.UTC)

type rdmEnv struct {
	db     *storage.DB
	app    *app.App
	clock  *testclock.Clock
	ctx    context.Context // the tenant's
	tenant string
}

func rdmSetup(t *testing.T, db *storage.DB) *rdmEnv {
	t.Helper()
	clock := testclock.New(rdmT0)
	env := apptest.New(t, db, apptest.WithClock(clock.Now), apptest.WithTenant("Loja Redeem"))
	return &rdmEnv{db: db, app: env.App, clock: clock, ctx: env.Ctx, tenant: env.TenantID}
}

// customers creates n customers and returns their ids.
func (e *rdmEnv) customers(t *testing.T, n int) []string {
	t.Helper()
	ids := make([]string, 0, n)
	for start := 0; start < n; start += 100 {
		var builders []*ent.CustomerCreate
		for i := start; i < min(n, start+100); i++ {
			builders = append(builders, e.db.Ent.Customer.Create().
				SetName(fmt.Sprintf("Cliente %d", i)).SetEmail(fmt.Sprintf("cliente%d@example.com", i)).
				SetDocument(fmt.Sprintf("%011d", 10_000_000+i)))
		}
		created, err := e.db.Ent.Customer.CreateBulk(builders...).Save(e.ctx)
		require.NoError(t, err)
		for _, c := range created {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

func rdmInt(n int) *int { return &n }

func rdmDec(s string) *decimal.Decimal {
	d := decimal.RequireFromString(s)
	return &d
}

// campaign creates an active campaign (started an hour ago, ending in a
// month) after the changes of mod.
func (e *rdmEnv) campaign(t *testing.T, mod func(*campaigns.CampaignInput)) *ent.Campaign {
	t.Helper()
	starts, ends := e.clock.Now().Add(-time.Hour), e.clock.Now().AddDate(0, 1, 0)
	in := campaigns.CampaignInput{
		Name: "Dez por cento", Type: "discount", StartsAt: &starts, EndsAt: &ends,
		Discount: &campaigns.DiscountInput{Mode: "percentage", Value: rdmDec("10")},
	}
	if mod != nil {
		mod(&in)
	}
	c, err := e.app.Campaigns.CreateCampaign(e.ctx, in)
	require.NoError(t, err)
	return c
}

// validate validates a one-item cart of R$ 100 and returns the token,
// requiring the campaigns to be eligible.
func (e *rdmEnv) validate(t *testing.T, customerID string, campaignIDs ...string) string {
	t.Helper()
	tok, err := e.tryValidate(customerID, campaignIDs...)
	require.NoError(t, err)
	return tok
}

// tryValidate is validate for any goroutine.
func (e *rdmEnv) tryValidate(customerID string, campaignIDs ...string) (string, error) {
	v, err := e.app.Checkout.ValidateCart(e.ctx, checkout.ValidateInput{
		CustomerID: customerID, Channel: "pdv",
		Cart: eligibility.Cart{Items: []eligibility.Item{{
			SKU: "SKU-1", Category: "bebidas", Quantity: decimal.NewFromInt(2), UnitPrice: decimal.NewFromInt(50),
		}}},
	})
	if err != nil {
		return "", err
	}
	for _, id := range campaignIDs {
		if !slices.ContainsFunc(v.Eligible, func(el eligibility.Eligible) bool { return el.Campaign.ID == id }) {
			return "", fmt.Errorf("campaign %s is not eligible: %+v", id, v.Ineligible)
		}
	}
	if want := e.clock.Now().Add(checkout.ValidationTTL); !v.ExpiresAt.Equal(want) {
		return "", fmt.Errorf("expires_at %s, want %s", v.ExpiresAt, want)
	}
	return v.Token, nil
}

// validateEach validates a cart for each customer, eight at a time, and
// returns the tokens in the customers' order.
func (e *rdmEnv) validateEach(t *testing.T, customerIDs []string, campaignID string) []string {
	t.Helper()
	tokens := make([]string, len(customerIDs))
	errs := make([]error, len(customerIDs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				tokens[i], errs[i] = e.tryValidate(customerIDs[i], campaignID)
			}
		}()
	}
	for i := range customerIDs {
		next <- i
	}
	close(next)
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	return tokens
}

func (e *rdmEnv) redeem(campaignID, customerID, orderID, token string) (*ent.Redemption, error) {
	red, replay, err := e.app.Checkout.RedeemCampaign(e.ctx, checkout.RedeemInput{
		CampaignID: campaignID, CustomerID: customerID, OrderID: orderID, Token: token,
		AmountPaid: decimal.RequireFromString("90.00"),
	}, nil)
	if replay != nil {
		panic("a redeem without Idempotency-Key replayed")
	}
	return red, err
}

// rdmRequireCode checks err is an operation error of kind, code and field.
func rdmRequireCode(t *testing.T, err error, kind apperr.Kind, code, field string) {
	t.Helper()
	require.Error(t, err)
	e, ok := apperr.As(err)
	require.True(t, ok, "not an operation error: %v", err)
	require.Equal(t, kind, e.Kind, "%v", err)
	require.Equal(t, code, e.Code, "%v", err)
	require.Equal(t, field, e.Field, "%v", err)
}

// counts returns the redemptions of the campaign as rows and as the
// campaign's redemptions_count.
func (e *rdmEnv) counts(t *testing.T, campaignID string) (rows, counter int) {
	t.Helper()
	rows, err := e.db.Ent.Redemption.Query().Where(redemption.CampaignID(campaignID)).Count(e.ctx)
	require.NoError(t, err)
	c, err := e.db.Ent.Campaign.Get(e.ctx, campaignID)
	require.NoError(t, err)
	return rows, c.RedemptionsCount
}

// count counts the redemptions matching ps.
func (e *rdmEnv) count(t *testing.T, ps ...predicate.Redemption) int {
	t.Helper()
	n, err := e.db.Ent.Redemption.Query().Where(ps...).Count(e.ctx)
	require.NoError(t, err)
	return n
}

// rdmAttempt is one redeem of a concurrent run.
type rdmAttempt struct {
	customerID, orderID, token string
}

// rdmOutcome is what the attempts of a concurrent run got.
type rdmOutcome struct {
	ok       []*ent.Redemption
	errs     []error
	duration time.Duration
}

// race releases every attempt at once behind a start barrier.
func (e *rdmEnv) race(t *testing.T, campaignID string, attempts []rdmAttempt) rdmOutcome {
	t.Helper()
	var (
		ready, done sync.WaitGroup
		start       = make(chan struct{})
		mu          sync.Mutex
		out         rdmOutcome
	)
	for _, a := range attempts {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			ready.Done()
			<-start
			red, err := e.redeem(campaignID, a.customerID, a.orderID, a.token)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				out.errs = append(out.errs, err)
				return
			}
			out.ok = append(out.ok, red)
		}()
	}
	ready.Wait()
	began := time.Now()
	close(start)
	done.Wait()
	out.duration = time.Since(began)
	return out
}

// TestRedeemTotalLimitConcurrent: 500 distinct customers redeem a campaign
// limited to 50 redemptions at once; exactly 50 succeed.
func TestRedeemTotalLimitConcurrent(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		const customers, limit = 500, 50
		e := rdmSetup(t, db)
		camp := e.campaign(t, func(in *campaigns.CampaignInput) {
			in.Limits = &campaigns.LimitsInput{Total: rdmInt(limit)}
		})
		ids := e.customers(t, customers)
		began := time.Now()
		tokens := e.validateEach(t, ids, camp.ID)
		validated := time.Since(began)
		attempts := make([]rdmAttempt, len(ids))
		for i, id := range ids {
			attempts[i] = rdmAttempt{customerID: id, orderID: fmt.Sprintf("order-%d", i), token: tokens[i]}
		}

		out := e.race(t, camp.ID, attempts)
		t.Logf("%s: %d validations in %v, %d concurrent redeems in %v", db.Dialect, customers, validated, customers, out.duration)

		require.Len(t, out.ok, limit)
		require.Len(t, out.errs, customers-limit)
		for _, err := range out.errs {
			rdmRequireCode(t, err, apperr.KindConflict, "redemption_limit_reached", "limits.total")
		}
		rows, counter := e.counts(t, camp.ID)
		require.Equal(t, limit, rows, "redemption rows")
		require.Equal(t, limit, counter, "campaigns.redemptions_count")
		winners := map[string]bool{}
		for _, red := range out.ok {
			winners[red.CustomerID] = true
		}
		require.Len(t, winners, limit, "one redemption per winning customer")

		// Validate now finds the campaign exhausted, and one more redeem of
		// a token that listed it is refused.
		v, err := e.app.Checkout.ValidateCart(e.ctx, checkout.ValidateInput{CustomerID: ids[0], Channel: "pdv",
			Cart: eligibility.Cart{Items: []eligibility.Item{{SKU: "A", Quantity: decimal.NewFromInt(1), UnitPrice: decimal.NewFromInt(10)}}}})
		require.NoError(t, err)
		require.Empty(t, v.Eligible)
		require.Len(t, v.Ineligible, 1)
		require.Equal(t, eligibility.LimitReached, v.Ineligible[0].Reason)
	})
}

// TestRedeemPerCustomerLimitConcurrent: one customer redeems a campaign
// limited to 3 per customer with 30 validations at once; exactly 3 succeed.
func TestRedeemPerCustomerLimitConcurrent(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		const tries, limit = 30, 3
		e := rdmSetup(t, db)
		camp := e.campaign(t, func(in *campaigns.CampaignInput) {
			in.Limits = &campaigns.LimitsInput{PerCustomer: rdmInt(limit)}
		})
		cust := e.customers(t, 1)[0]
		attempts := make([]rdmAttempt, tries)
		for i := range attempts {
			attempts[i] = rdmAttempt{customerID: cust, orderID: fmt.Sprintf("order-%d", i), token: e.validate(t, cust, camp.ID)}
		}
		out := e.race(t, camp.ID, attempts)
		t.Logf("%s: %d concurrent redeems of one customer in %v", db.Dialect, tries, out.duration)

		require.Len(t, out.ok, limit)
		require.Len(t, out.errs, tries-limit)
		for _, err := range out.errs {
			rdmRequireCode(t, err, apperr.KindConflict, "redemption_limit_reached", "limits.per_customer")
		}
		rows, counter := e.counts(t, camp.ID)
		require.Equal(t, limit, rows)
		require.Equal(t, limit, counter)
		// The losers' tokens stay unbound: the whole redemption rolled back.
		bound, err := e.db.Ent.ValidationToken.Query().Where(validationtoken.OrderIDNotNil()).Count(e.ctx)
		require.NoError(t, err)
		require.Equal(t, limit, bound)
	})
}

// TestRedeemBothLimitsConcurrent: 20 customers with 3 tokens each race for
// a campaign of 10 redemptions in all and 2 per customer.
func TestRedeemBothLimitsConcurrent(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := rdmSetup(t, db)
		camp := e.campaign(t, func(in *campaigns.CampaignInput) {
			in.Limits = &campaigns.LimitsInput{Total: rdmInt(10), PerCustomer: rdmInt(2)}
		})
		var attempts []rdmAttempt
		for i, id := range e.customers(t, 20) {
			for j := range 3 {
				attempts = append(attempts, rdmAttempt{customerID: id, orderID: fmt.Sprintf("order-%d-%d", i, j), token: e.validate(t, id, camp.ID)})
			}
		}
		out := e.race(t, camp.ID, attempts)
		require.Len(t, out.ok, 10)
		for _, err := range out.errs {
			e, ok := apperr.As(err)
			require.True(t, ok, "%v", err)
			require.Equal(t, "redemption_limit_reached", e.Code)
		}
		perCustomer := map[string]int{}
		for _, red := range out.ok {
			perCustomer[red.CustomerID]++
		}
		for id, n := range perCustomer {
			require.LessOrEqual(t, n, 2, "customer %s", id)
		}
		rows, counter := e.counts(t, camp.ID)
		require.Equal(t, 10, rows)
		require.Equal(t, 10, counter)
	})
}

// TestRedeemBudgetConcurrent: 500 customers redeem at once a R$ 10 discount
// of a campaign whose budget is R$ 500; exactly 50 succeed, the budget is
// spent to the cent, and rollbacks give their R$ back.
func TestRedeemBudgetConcurrent(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		const customers, fits = 500, 50
		e := rdmSetup(t, db)
		camp := e.campaign(t, func(in *campaigns.CampaignInput) {
			in.Budget = &campaigns.BudgetInput{Total: rdmDec("500")}
		})
		ids := e.customers(t, customers)
		tokens := e.validateEach(t, ids, camp.ID)
		attempts := make([]rdmAttempt, len(ids))
		for i, id := range ids {
			attempts[i] = rdmAttempt{customerID: id, orderID: fmt.Sprintf("order-%d", i), token: tokens[i]}
		}
		out := e.race(t, camp.ID, attempts)
		t.Logf("%s: %d concurrent redeems in %v", db.Dialect, customers, out.duration)
		require.Len(t, out.ok, fits)
		for _, err := range out.errs {
			rdmRequireCode(t, err, apperr.KindConflict, "budget_exhausted", "budget")
		}
		spent := func() string {
			c, err := db.Ent.Campaign.Get(e.ctx, camp.ID)
			require.NoError(t, err)
			return c.BudgetSpent.StringFixed(2)
		}
		require.Equal(t, "500.00", spent())
		rows, counter := e.counts(t, camp.ID)
		require.Equal(t, fits, rows)
		require.Equal(t, fits, counter, "the refused redemptions took nothing from the count")

		// Spent: validate finds the campaign exhausted; a rollback gives R$ 10 back.
		v, err := e.app.Checkout.ValidateCart(e.ctx, checkout.ValidateInput{CustomerID: ids[0], Channel: "pdv",
			Cart: eligibility.Cart{Items: []eligibility.Item{{SKU: "A", Quantity: decimal.NewFromInt(1), UnitPrice: decimal.NewFromInt(100)}}}})
		require.NoError(t, err)
		require.Len(t, v.Ineligible, 1)
		require.Equal(t, eligibility.BudgetExhausted, v.Ineligible[0].Reason)
		_, err = e.app.Loyalty.RollbackRedemption(e.ctx, out.ok[0].ID, "order cancelled")
		require.NoError(t, err)
		require.Equal(t, "490.00", spent())
		// A job run as the system gives back as well (it reads the tenant's zone).
		_, err = e.app.Loyalty.RollbackRedemption(viewer.SystemContext(context.Background()), out.ok[1].ID, "order cancelled")
		require.NoError(t, err)
		require.Equal(t, "480.00", spent())
		tok := e.validate(t, ids[len(ids)-1], camp.ID)
		_, err = e.redeem(camp.ID, ids[len(ids)-1], "order-again", tok)
		require.NoError(t, err)
		require.Equal(t, "490.00", spent())
	})
}
