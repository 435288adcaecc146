package pos

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/app/wallets"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/domain/campaignrules"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/campaign"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/redemption"
	"github.com/fideliza/fideliza/ent/sale"
	"github.com/fideliza/fideliza/ent/saleitem"
	"github.com/fideliza/fideliza/ent/salereturn"
	"github.com/fideliza/fideliza/ent/schema"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/viewer"
)

// returnsProcessed is what processing a sale's returns did.
type returnsProcessed struct {
	applied        map[salereturn.Kind]int // returns applied, by kind
	pointsReversed int64                   // points taken back
}

// ProcessSaleReturn works the job queued with a return (processSaleReturn)
// in a transaction of its own: a run killed midway leaves nothing, and the
// retry applies the return once. Once committed it counts what it did.
func (a *Service) ProcessSaleReturn(ctx context.Context, args jobs.ProcessSaleReturn) error {
	if err := Rules.ProcessSaleReturn.Allow(ctx); err != nil {
		return err
	}
	ctx = schema.RememberVisible(viewer.TenantContext(ctx, args.TenantID))
	var done *returnsProcessed
	err := a.k.DB.InTx(ctx, func(tx storage.Tx) (err error) {
		done, err = a.processSaleReturn(ctx, tx, args.ReturnID)
		return err
	})
	if err != nil || done == nil {
		return err
	}
	for kind, n := range done.applied {
		a.k.Recorder().ReturnsProcessed(string(kind), n)
	}
	a.k.Recorder().PointsReversed(kernel.SourceReturn, done.pointsReversed)
	return nil
}

// processSaleReturn applies a return once its sale is processed, together
// with the sale's other returns still waiting, in the order they were
// received: points taken back in proportion to the net value returned (the
// bonus recomputed on what the customer kept), a debt for points already
// spent, the redemptions whose discounted units all came back released,
// lifetime value, level, purchases, the sale's status and the events, all in tx. A
// return already applied answers nil; a sale still being processed
// answers ErrSaleNotProcessed.
func (a *Service) processSaleReturn(ctx context.Context, tx storage.Tx, returnID string) (*returnsProcessed, error) {
	c := tx.Ent
	ret, err := c.SaleReturn.Get(ctx, returnID)
	if err != nil {
		return nil, err
	}
	// The customer's row is locked before the sale's (lockCustomer's lock
	// order). A processed sale's customer is final: it can be read unlocked.
	s, err := c.Sale.Get(ctx, ret.SaleID)
	if err != nil {
		return nil, err
	}
	if s.Status == sale.StatusRECEIVED {
		return nil, ErrSaleNotProcessed
	}
	if s.CustomerID != nil {
		if _, err := a.k.LockCustomer(ctx, c, *s.CustomerID); err != nil {
			return nil, err
		}
	}
	if a.k.DB.Dialect == dialect.Postgres {
		if s, err = c.Sale.Query().Where(sale.ID(s.ID)).ForUpdate(entsql.WithLockTables(sale.Table)).Only(ctx); err != nil {
			return nil, err
		}
	}
	waiting, err := c.SaleReturn.Query().
		Where(salereturn.SaleID(s.ID), salereturn.StatusEQ(salereturn.StatusRECEIVED)).
		Order(ent.Asc(salereturn.FieldCreatedAt), ent.Asc(salereturn.FieldID)).All(ctx)
	if err != nil || len(waiting) == 0 {
		return nil, err // applied already, by this job's earlier run or a later return's
	}
	r := &saleReturns{a: a, c: c, s: s, now: a.k.Stamp()}
	if err := r.load(ctx); err != nil {
		return nil, err
	}
	done := &returnsProcessed{applied: map[salereturn.Kind]int{}}
	for _, ret := range waiting {
		n, err := r.apply(ctx, ret)
		if err != nil {
			return nil, fmt.Errorf("return %s: %w", ret.ID, err)
		}
		done.applied[ret.Kind]++
		done.pointsReversed += n
	}
	if s.CustomerID != nil { // its purchases recounted, and the audiences see the return as it commits
		if err := customers.RecountPurchases(ctx, c, *s.CustomerID); err != nil {
			return nil, err
		}
		if err := a.Audiences.Refresh(ctx, tx, *s.CustomerID); err != nil {
			return nil, err
		}
	}
	return done, nil
}

// saleReturns applies returns to one locked sale.
type saleReturns struct {
	a        *Service
	c        *ent.Client
	s        *ent.Sale
	now      time.Time
	items    []*ent.SaleItem
	store    string
	returned map[string]decimal.Decimal // units returned by the returns applied, by line
	earned   int64                      // points the sale credited (its credit and bonus)
	spent    int64                      // points the sale was paid with
	bonus    int64                      // of which bonus
}

func (r *saleReturns) load(ctx context.Context) error {
	var err error
	if r.items, err = r.c.SaleItem.Query().Where(saleitem.SaleID(r.s.ID)).Order(ent.Asc(saleitem.FieldID)).All(ctx); err != nil {
		return err
	}
	st, err := r.c.Store.Get(ctx, r.s.StoreID)
	if err != nil {
		return err
	}
	r.store = st.Code
	r.returned = map[string]decimal.Decimal{}
	applied, err := r.c.SaleReturn.Query().
		Where(salereturn.SaleID(r.s.ID), salereturn.StatusEQ(salereturn.StatusPROCESSED)).All(ctx)
	if err != nil {
		return err
	}
	for _, ret := range applied {
		if err := r.count(ret); err != nil {
			return err
		}
	}
	if r.s.CustomerID == nil {
		return nil
	}
	credits, err := r.c.PointsEntry.Query().Where(pointsentry.CustomerID(*r.s.CustomerID),
		pointsentry.SourceKindEQ(pointsentry.SourceKindSale), pointsentry.SourceID(r.s.ID),
		pointsentry.KindIn(pointsentry.KindCredit, pointsentry.KindBonus, pointsentry.KindDebit)).All(ctx)
	if err != nil {
		return err
	}
	for _, e := range credits {
		if e.Kind == pointsentry.KindDebit {
			r.spent -= e.Points
			continue
		}
		if e.Kind == pointsentry.KindBonus {
			r.bonus += e.Points
		}
		r.earned += e.Points
	}
	return nil
}

// count adds a return's units to those returned.
func (r *saleReturns) count(ret *ent.SaleReturn) error {
	var lines []returnLine
	if err := json.Unmarshal(ret.Lines, &lines); err != nil {
		return fmt.Errorf("lines of return %s: %w", ret.ID, err)
	}
	for _, l := range lines {
		r.returned[l.LineID] = r.returned[l.LineID].Add(l.Quantity)
	}
	return nil
}

// allReturned says whether every unit of the given lines (all when none
// are given) came back.
func (r *saleReturns) allReturned(lines map[string]bool) bool {
	for _, it := range r.items {
		if (lines == nil || lines[it.LineID]) && r.returned[it.LineID].LessThan(it.Quantity) {
			return false
		}
	}
	return true
}

// apply applies one return and returns the points it took back.
func (r *saleReturns) apply(ctx context.Context, ret *ent.SaleReturn) (int64, error) {
	before := maps.Clone(r.returned)
	if err := r.count(ret); err != nil {
		return 0, err
	}
	if err := r.cancelReturnedGiftCards(ctx, ret); err != nil {
		return 0, err
	}
	s := r.s
	returnedAmount := s.ReturnedAmount.Add(ret.Amount)
	whole := r.allReturned(nil)
	var reversed int64
	var entry *ent.PointsEntry
	if s.Status != sale.StatusFAILED {
		// The cashback and gift cards paid with come back first too.
		err := r.a.Wallets.GiveBackSale(ctx, r.c, wallets.GiveBack{SaleID: s.ID, ReturnID: ret.ID, StoreCode: r.store,
			Reason: "paid with given back: " + string(ret.Kind) + " " + ret.ExternalID + " of sale " + s.ExternalID + " at " + r.store,
			Share:  func(paid int64) int64 { return r.share(paid, returnedAmount, whole) }})
		if err != nil {
			return 0, err
		}
	}
	if s.CustomerID != nil && s.Status != sale.StatusFAILED {
		target, err := r.kept(ctx, returnedAmount, whole)
		if err != nil {
			return 0, err
		}
		reversed = max(r.earned-target-s.PointsReversed, 0)
		// Points paid with come back first, in proportion to the value
		// returned; then the points the sale earned are taken back.
		if err := r.giveBackPoints(ctx, ret, returnedAmount, whole); err != nil {
			return 0, err
		}
		entry, err = r.a.Loyalty.ReverseReturnPoints(ctx, r.c, loyalty.ReturnPoints{
			CustomerID: *s.CustomerID, ReturnID: ret.ID, Points: reversed,
			Reason: string(ret.Kind) + " " + ret.ExternalID + " of sale " + s.ExternalID + " at " + r.store,
		}, ret.Amount)
		if err != nil {
			return 0, err
		}
		if err := r.giveBackBudgets(ctx, before); err != nil {
			return 0, err
		}
		if err := r.releaseRedemptions(ctx); err != nil {
			return 0, err
		}
	}
	status := s.Status
	switch {
	case s.Status == sale.StatusFAILED:
	case ret.Kind == salereturn.KindCancellation:
		status = sale.StatusCANCELLED
	case whole:
		status = sale.StatusRETURNED
	default:
		status = sale.StatusPARTIALLY_RETURNED
	}
	if err := r.c.SaleReturn.UpdateOneID(ret.ID).SetStatus(salereturn.StatusPROCESSED).SetPointsReversed(reversed).
		SetProcessedAt(r.now).Exec(ctx); err != nil {
		return 0, err
	}
	if err := r.c.Sale.UpdateOneID(s.ID).SetReturnedAmount(returnedAmount).AddPointsReversed(reversed).SetStatus(status).
		Exec(ctx); err != nil {
		return 0, err
	}
	s.ReturnedAmount, s.PointsReversed, s.Status = returnedAmount, s.PointsReversed+reversed, status
	typ := outbox.SaleReturned
	if ret.Kind == salereturn.KindCancellation {
		typ = outbox.SaleCancelled
	}
	var customerID any
	if s.CustomerID != nil {
		customerID = *s.CustomerID
	}
	err := outbox.Record(ctx, r.c, r.now, s.TenantID, typ, s.ID, map[string]any{
		"sale_id": s.ID, "receipt": s.ExternalID, "store_code": r.store, "customer_id": customerID,
		"return_id": ret.ID, "external_id": ret.ExternalID, "amount": ret.Amount.String(), "points_reversed": reversed,
		"status": string(status),
	})
	if err != nil || entry == nil || reversed == 0 {
		return reversed, err
	}
	return reversed, outbox.Record(ctx, r.c, r.now, s.TenantID, outbox.PointsReversed, *s.CustomerID, map[string]any{
		"customer_id": *s.CustomerID, "points": reversed, "balance_after": entry.BalanceAfter, "debt_after": entry.DebtAfter,
		"source": "return", "source_id": ret.ID, "sale_id": s.ID,
	})
}

// giveBackPoints credits back the share of the points the sale was paid
// with that this return brings back (share).
func (r *saleReturns) giveBackPoints(ctx context.Context, ret *ent.SaleReturn, returnedAmount decimal.Decimal, whole bool) error {
	s := r.s
	back := r.share(r.spent, returnedAmount, whole)
	if back <= 0 {
		return nil
	}
	return r.a.Loyalty.RefundReturnPoints(ctx, r.c, loyalty.ReturnPoints{CustomerID: *s.CustomerID, ReturnID: ret.ID, Points: back,
		Reason: "points paid given back: " + string(ret.Kind) + " " + ret.ExternalID + " of sale " + s.ExternalID + " at " + r.store})
}

// share is what of paid (points or cents a sale was paid with) this
// return brings back, once returnedAmount of the sale came back: all of it
// once every unit is back (whole), else its share of the value returned so
// far less the share of the returns before it (whole units down).
func (r *saleReturns) share(paid int64, returnedAmount decimal.Decimal, whole bool) int64 {
	s := r.s
	if paid <= 0 || !s.AmountPayable.IsPositive() {
		return 0
	}
	of := func(returned decimal.Decimal) int64 {
		return min(paid, decimal.NewFromInt(paid).Mul(returned).Div(s.AmountPayable).Floor().IntPart())
	}
	target := paid
	if !whole {
		target = of(returnedAmount)
	}
	return target - of(s.ReturnedAmount)
}

// kept is the points the customer keeps of the sale once returnedAmount of
// it came back: its credit in proportion to the whole reais kept (points
// are earned per whole R$ 1 paid, so a return that leaves those untouched
// takes nothing back), and the bonus the units kept still earn (never more
// than was given).
func (r *saleReturns) kept(ctx context.Context, returnedAmount decimal.Decimal, whole bool) (int64, error) {
	if whole || r.earned == 0 {
		return 0, nil
	}
	s := r.s
	base := r.earned - r.bonus
	// The gift cards sold earned nothing: neither they nor their return count.
	earning := s.AmountPayable.Sub(giftCardsSold(r.items, nil))
	keptValue := decimal.Max(earning.Sub(returnedAmount.Sub(giftCardsSold(r.items, r.returned))), decimal.Zero).Floor()
	paid := earning.Floor()
	var keptBase int64
	if paid.IsPositive() {
		keptBase = min(base, decimal.NewFromInt(base).Mul(keptValue).Div(paid).Floor().IntPart())
	}
	if r.bonus == 0 {
		return keptBase, nil
	}
	cust, err := r.c.Customer.Get(ctx, *s.CustomerID)
	if err != nil {
		return 0, err
	}
	tenant, err := r.c.Tenant.Get(ctx, s.TenantID)
	if err != nil {
		return 0, err
	}
	rows, err := r.c.Campaign.Query().
		Where(campaign.TypeEQ(campaign.TypeBonusPoints), campaignrules.WhereStatusAt(campaign.StatusActive, s.SoldAt)).
		All(ctx)
	if err != nil {
		return 0, err
	}
	bonus, _, err := r.a.saleBonus(ctx, r.c, campaignrules.BonusOf(campaignrules.OfAll(rows)), s, r.items, r.returned, cust, tenant.PointsPerReal)
	if err != nil {
		return 0, err
	}
	return keptBase + min(bonus, r.bonus), nil
}

// giveBackBudgets returns to their campaigns' budgets the discounts of the
// units this return brought back (those returned beyond before), and records
// them on the redemptions: a rollback, when every discounted unit came back,
// gives back only the rest. Discounted units are taken to come back first.
func (r *saleReturns) giveBackBudgets(ctx context.Context, before map[string]decimal.Decimal) error {
	back := map[string]decimal.Decimal{} // campaign → R$
	for _, it := range r.items {
		ds, err := storedDiscounts(it.Discounts)
		if err != nil {
			return err
		}
		for _, d := range ds {
			if d.external() || d.UnitDiscount == nil || d.Quantity == nil {
				continue
			}
			units := decimal.Min(r.returned[it.LineID], *d.Quantity).Sub(decimal.Min(before[it.LineID], *d.Quantity))
			if units.IsPositive() {
				back[*d.PromotionID] = back[*d.PromotionID].Add(d.UnitDiscount.Mul(units))
			}
		}
	}
	if len(back) == 0 {
		return nil
	}
	reds, err := r.c.Redemption.Query().Where(redemption.SaleID(r.s.ID), redemption.RolledBackAtIsNil(),
		redemption.CampaignIDIn(slices.Collect(maps.Keys(back))...)).All(ctx)
	if err != nil {
		return err
	}
	for _, red := range reds {
		amount := back[red.CampaignID]
		if err := r.a.Campaigns.GiveBackBudget(ctx, r.c, red, amount, r.now); err != nil {
			return err
		}
		returned := amount
		if red.BudgetReturned != nil {
			returned = returned.Add(*red.BudgetReturned)
		}
		if err := r.c.Redemption.UpdateOneID(red.ID).SetBudgetReturned(returned).Exec(ctx); err != nil {
			return err
		}
		red.BudgetReturned = &returned
	}
	return nil
}

// releaseRedemptions rolls back the sale's redemptions whose discounted
// units all came back: the campaign's limits get the redemption back.
func (r *saleReturns) releaseRedemptions(ctx context.Context) error {
	reds, err := r.c.Redemption.Query().Where(redemption.SaleID(r.s.ID), redemption.RolledBackAtIsNil()).All(ctx)
	if err != nil || len(reds) == 0 {
		return err
	}
	discounted := map[string]map[string]bool{} // campaign → lines carrying its discount
	for _, it := range r.items {
		ds, err := storedDiscounts(it.Discounts)
		if err != nil {
			return err
		}
		for _, d := range ds {
			if d.external() {
				continue
			}
			if discounted[*d.PromotionID] == nil {
				discounted[*d.PromotionID] = map[string]bool{}
			}
			discounted[*d.PromotionID][it.LineID] = true
		}
	}
	for _, red := range reds {
		lines := discounted[red.CampaignID]
		if len(lines) == 0 || !r.allReturned(lines) {
			continue
		}
		if err := r.a.Campaigns.RollBack(ctx, r.c, red, "every discounted unit of sale "+r.s.ExternalID+" was returned", r.now); err != nil {
			return err
		}
	}
	return nil
}
