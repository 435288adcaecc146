package campaigns

import (
	"context"
	"maps"
	"strings"
	"time"

	entsql "entgo.io/ent/dialect/sql"

	"entgo.io/ent/dialect"
	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/campaignrules"
	"github.com/fideliza/fideliza/domain/eligibility"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/domain/points"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/campaign"
	"github.com/fideliza/fideliza/ent/predicate"
	"github.com/fideliza/fideliza/ent/redemption"
)

// Money budgets (issue 19): a discount or cashback campaign may give at most
// so many R$ in all, in each store and in each period (day, week, month of
// the tenant's time zone). What it gave is kept on the campaign's row: in
// all (budget_spent) and by store and for the current period
// (budget_spent_by), so that deciding whether a campaign has budget left is
// reading it, and spending is one update of a row the spender has locked.

// BudgetInput is a campaign's money budgets; nil amounts are none.
type BudgetInput struct {
	Total, PerStore, PerPeriod *decimal.Decimal
	Period                     string // day, week or month, with PerPeriod
}

func (b *BudgetInput) validate(p *apperr.Problems, typ string) {
	if b == nil {
		return
	}
	if typ != string(campaign.TypeDiscount) && typ != string(campaign.TypeCashback) {
		p.Add("budget", "is for discount and cashback campaigns: a budget is of R$ given")
	}
	for field, v := range map[string]*decimal.Decimal{"budget.total": b.Total, "budget.per_store": b.PerStore, "budget.per_period": b.PerPeriod} {
		if v != nil && (!v.IsPositive() || v.Exponent() < -2) {
			p.Add(field, "must be a positive amount in R$ with at most 2 decimal places")
		}
	}
	switch {
	case b.PerPeriod != nil && campaign.BudgetPeriodValidator(campaign.BudgetPeriod(b.Period)) != nil:
		p.Add("budget.period", "must be day, week or month")
	case b.PerPeriod == nil && b.Period != "":
		p.Add("budget.per_period", "is required with budget.period")
	}
}

// set sets the budget of a campaign being created.
func (b *BudgetInput) set(c *ent.CampaignCreate) {
	if b == nil {
		return
	}
	c.SetNillableBudgetTotal(b.Total).SetNillableBudgetPerStore(b.PerStore).SetNillableBudgetPerPeriod(b.PerPeriod)
	if b.PerPeriod != nil {
		c.SetBudgetPeriod(campaign.BudgetPeriod(b.Period))
	}
}

// HasBudget tells whether a campaign has a money budget.
func HasBudget(c *ent.Campaign) bool { return campaignrules.BudgetOf(c).Any() }

// budgetZone is the time zone of a campaign's tenant, the one of its
// budgets per period.
func (a *Service) budgetZone(ctx context.Context, c *ent.Client, camp *ent.Campaign) (*time.Location, error) {
	t, err := a.k.SettingsOf(ctx, c, camp.TenantID)
	if err != nil {
		return nil, err
	}
	return points.Zone(t.TimeZone)
}

// lockedCampaign reads a campaign the transaction of c updates, locked
// until it ends (PostgreSQL; SQLite's writer transaction holds the
// database).
func (a *Service) lockedCampaign(ctx context.Context, c *ent.Client, id string) (*ent.Campaign, error) {
	q := c.Campaign.Query().Where(campaign.ID(id))
	if a.k.DB.Dialect == dialect.Postgres {
		q.ForUpdate()
	}
	return q.Only(ctx)
}

// budgetChange is a campaign's budget read for a change in a transaction
// that holds its row locked.
type budgetChange struct {
	id      string
	budget  eligibility.Budget
	spentBy map[string]decimal.Decimal // of the stores and the current period
	zone    *time.Location
}

// openBudget reads the budget of campaign id for a change at now in the
// transaction of c; nil when the campaign has no budget.
func (a *Service) openBudget(ctx context.Context, c *ent.Client, id string, now time.Time) (*budgetChange, error) {
	camp, err := a.lockedCampaign(ctx, c, id)
	if err != nil || !HasBudget(camp) {
		return nil, err
	}
	zone, err := a.budgetZone(ctx, c, camp)
	if err != nil {
		return nil, err
	}
	b := campaignrules.BudgetOf(camp)
	return &budgetChange{id: id, budget: b, spentBy: currentBuckets(b, now, zone), zone: zone}, nil
}

func (ch *budgetChange) save(ctx context.Context, c *ent.Client) error {
	return c.Campaign.UpdateOneID(ch.id).SetBudgetSpent(ch.budget.Spent).SetBudgetSpentBy(ch.spentBy).Exec(ctx)
}

// SpendBudget takes amount from the budgets of camp (its definition: what
// they spent is read under the lock), given at store at now. With enforce, a budget it would
// overdraw refuses it (budget_exhausted) and nothing is taken; without, it
// is taken all the same (a discount the point of sale already gave). A
// campaign without a budget costs no query.
func (a *Service) SpendBudget(ctx context.Context, c *ent.Client, camp eligibility.Campaign, store string, amount decimal.Decimal, now time.Time, enforce bool) error {
	if !amount.IsPositive() || !camp.Budget.Any() {
		return nil
	}
	ch, err := a.openBudget(ctx, c, camp.ID, now)
	if err != nil || ch == nil {
		return err
	}
	b := &ch.budget
	b.Spent = b.Spent.Add(amount)
	var over []string
	if b.Total != nil && b.Spent.GreaterThan(*b.Total) {
		over = append(over, "in all")
	}
	if b.PerStore != nil && store != "" {
		key := eligibility.StoreBudgetKey(store)
		ch.spentBy[key] = ch.spentBy[key].Add(amount)
		if ch.spentBy[key].GreaterThan(*b.PerStore) {
			over = append(over, "at store "+store)
		}
	}
	if b.PerPeriod != nil {
		key := eligibility.PeriodBudgetKey(b.Period, now, ch.zone)
		ch.spentBy[key] = ch.spentBy[key].Add(amount)
		if ch.spentBy[key].GreaterThan(*b.PerPeriod) {
			over = append(over, "this "+b.Period)
		}
	}
	if enforce && len(over) > 0 {
		return apperr.Conflict("budget_exhausted", "budget",
			"the campaign's budget has not R$ "+amount.StringFixed(2)+" left "+strings.Join(over, ", "))
	}
	return ch.save(ctx, c)
}

// GiveBackBudget returns amount R$ of a redemption to its campaign's budgets,
// in the transaction of c: in all, to its store, and to the current period
// when it was given in it (a past period is over).
func (a *Service) GiveBackBudget(ctx context.Context, c *ent.Client, red *ent.Redemption, amount decimal.Decimal, now time.Time) error {
	if !amount.IsPositive() {
		return nil
	}
	ch, err := a.openBudget(ctx, c, red.CampaignID, now)
	if err != nil || ch == nil {
		return err
	}
	less := func(v decimal.Decimal) decimal.Decimal { return decimal.Max(decimal.Zero, v.Sub(amount)) }
	ch.budget.Spent = less(ch.budget.Spent)
	if key := eligibility.StoreBudgetKey(red.StoreCode); red.StoreCode != "" {
		if v, ok := ch.spentBy[key]; ok {
			ch.spentBy[key] = less(v)
		}
	}
	if b := ch.budget; b.PerPeriod != nil {
		key := eligibility.PeriodBudgetKey(b.Period, now, ch.zone)
		if v, ok := ch.spentBy[key]; ok && key == eligibility.PeriodBudgetKey(b.Period, red.CreatedAt, ch.zone) {
			ch.spentBy[key] = less(v)
		}
	}
	return ch.save(ctx, c)
}

// currentBuckets is a copy of the budget's spending by store and of the
// period of now: past periods are dropped, so the map does not grow with
// the days.
func currentBuckets(b eligibility.Budget, now time.Time, zone *time.Location) map[string]decimal.Decimal {
	out := make(map[string]decimal.Decimal, len(b.SpentBy)+2)
	period := ""
	if b.PerPeriod != nil {
		period = eligibility.PeriodBudgetKey(b.Period, now, zone)
	}
	maps.Copy(out, b.SpentBy)
	maps.DeleteFunc(out, func(k string, _ decimal.Decimal) bool {
		return !strings.HasPrefix(k, "store:") && k != period
	})
	return out
}

// RollBack undoes a redemption: it no longer counts toward the campaign's
// limits, its R$ go back to the campaign's budgets (but those a sale's
// returns gave back already), and a redemption.rolled_back event says so.
func (a *Service) RollBack(ctx context.Context, c *ent.Client, red *ent.Redemption, reason string, now time.Time) error {
	n, err := c.Redemption.Update().Where(redemption.ID(red.ID), redemption.RolledBackAtIsNil()).
		SetRolledBackAt(now).SetRollbackReason(reason).Save(ctx)
	if err != nil || n == 0 {
		return err
	}
	if err := c.Campaign.Update().Where(campaign.ID(red.CampaignID), campaign.RedemptionsCountGT(0)).
		AddRedemptionsCount(-1).Exec(ctx); err != nil {
		return err
	}
	given := red.DiscountAmount.Add(red.CashbackAmount)
	if red.BudgetReturned != nil { // what its sale's returns gave back already
		given = given.Sub(*red.BudgetReturned)
	}
	if err := a.GiveBackBudget(ctx, c, red, given, now); err != nil {
		return err
	}
	if red.CouponID != nil {
		if err := GiveBackCoupon(ctx, c, *red.CouponID); err != nil {
			return err
		}
	}
	if red.ValidationTokenID != nil {
		// The token is free again (for its order or another) once none of
		// its redemptions stands.
		live, err := c.Redemption.Query().Where(redemption.ValidationTokenID(*red.ValidationTokenID),
			redemption.RolledBackAtIsNil()).Exist(ctx)
		if err != nil {
			return err
		}
		if !live {
			if err := c.ValidationToken.UpdateOneID(*red.ValidationTokenID).ClearOrderID().Exec(ctx); err != nil {
				return err
			}
		}
	}
	return outbox.Record(ctx, c, now, red.TenantID, outbox.RedemptionRolledBack, red.ID, map[string]any{
		"redemption_id": red.ID, "campaign_id": red.CampaignID, "customer_id": red.CustomerID, "order_id": red.OrderID,
		"reason": reason,
	})
}

// ClaimRedemption takes one redemption from the campaign's total limit in
// one conditional update (and only where the extra conditions hold); false
// when the limit is reached or a condition fails.
func ClaimRedemption(ctx context.Context, c *ent.Client, campaignID string, where ...predicate.Campaign) (bool, error) {
	n, err := c.Campaign.Update().Where(append(where, campaign.ID(campaignID),
		campaign.Or(campaign.LimitTotalIsNil(), func(s *entsql.Selector) {
			s.Where(entsql.ColumnsLT(s.C(campaign.FieldRedemptionsCount), s.C(campaign.FieldLimitTotal)))
		}))...,
	).AddRedemptionsCount(1).Save(ctx)
	return n > 0, err
}

// RecordRedemption records the event of a redemption made, in its
// transaction (c).
func RecordRedemption(ctx context.Context, c *ent.Client, red *ent.Redemption) error {
	return outbox.Record(ctx, c, red.CreatedAt, red.TenantID, outbox.RedemptionCreated, red.ID, map[string]any{
		"redemption_id": red.ID, "campaign_id": red.CampaignID, "customer_id": red.CustomerID, "order_id": red.OrderID,
		"store_code": red.StoreCode, "discount_amount": red.DiscountAmount.String(), "cashback_amount": red.CashbackAmount.String(),
		"bonus_points": red.BonusPoints,
	})
}
