package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fideliza/fideliza/app/kernel"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/campaignrules"
	"github.com/fideliza/fideliza/domain/ledger"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/campaign"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/redemption"
	"github.com/fideliza/fideliza/ent/sale"
	"github.com/fideliza/fideliza/ent/saleitem"
	"github.com/fideliza/fideliza/ent/salereturn"
	"github.com/fideliza/fideliza/ent/schema"
	"github.com/fideliza/fideliza/ent/schema/viewer"
	"github.com/fideliza/fideliza/ent/store"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
)

// ErrSaleNotProcessed is a return whose sale is still being processed: it
// is applied after the sale (the worker tries again shortly).
var ErrSaleNotProcessed = errors.New("the sale is not processed yet")

// maxReturnIDLength bounds a return's or cancellation's id.
const maxReturnIDLength = 64

// SaleReturnInput is POST …/sales/{saleId}/returns (Kind return: the units
// listed) or …/cancellation (Kind cancellation: every unit not yet returned).
type SaleReturnInput struct {
	Protocol        string
	SaleRef         string // the path's saleId: the receipt number, or the sale's id (sal_…)
	Kind            salereturn.Kind
	ID              string
	StoreID, PosID  string
	Date            *time.Time
	Reason          string
	Items           []ReturnItemInput
	ItemsWereListed bool // a cancellation that lists items is refused: it cancels all
}

// ReturnItemInput is a line of a return: the sale's item id and how many of
// its units come back.
type ReturnItemInput struct {
	ID       string
	Quantity *decimal.Decimal
}

// returnLine is a line of a return as stored.
type returnLine struct {
	LineID   string          `json:"line_id"`
	Quantity decimal.Decimal `json:"quantity"`
}

func (in SaleReturnInput) validate() error {
	var p apperr.Problems
	checkProtocol(&p, in.Protocol, protocolSale, true)
	f := func(name string) string { return string(in.Kind) + "." + name }
	switch id := strings.TrimSpace(in.ID); {
	case id == "":
		p.Add(f("id"), "is required")
	case len(in.ID) > maxReturnIDLength:
		p.Add(f("id"), "must be at most %d characters", maxReturnIDLength)
	}
	if strings.TrimSpace(in.StoreID) == "" {
		p.Add(f("store.id"), "is required")
	}
	if in.Date == nil {
		p.Add(f("date"), "is required (ISO 8601)")
	}
	if len(in.Reason) > 500 {
		p.Add(f("reason"), "must be at most 500 characters")
	}
	if in.Kind == salereturn.KindCancellation {
		if in.ItemsWereListed {
			p.Add(f("items"), "is not taken: a cancellation returns every unit not yet returned")
		}
		return p.Malformed()
	}
	switch n := len(in.Items); {
	case n == 0:
		p.Add(f("items"), "must hold at least one item")
	case n > maxPOSItems:
		p.Add(f("items"), "must hold at most %d items", maxPOSItems)
	}
	seen := map[string]bool{}
	for i, it := range in.Items {
		fi := func(name string) string { return f("items[" + strconv.Itoa(i) + "]." + name) }
		switch {
		case strings.TrimSpace(it.ID) == "":
			p.Add(fi("id"), "is required: the id of the sale's item")
		case seen[it.ID]:
			p.Add(fi("id"), "lists item %s a second time", it.ID)
		}
		seen[it.ID] = true
		if it.Quantity == nil || !it.Quantity.IsPositive() {
			p.Add(fi("quantity"), "is required and must be positive")
		}
	}
	return p.Malformed()
}

// RegisterSaleReturn stores a return or cancellation and its processing job
// in one transaction, after checking what it returns is still returnable
// (under the sale's lock, so concurrent returns of one line never return
// more than it had). The same id for the same sale answers the return
// stored the first time.
func (a *App) RegisterSaleReturn(ctx context.Context, in SaleReturnInput) (*ent.SaleReturn, error) {
	if err := kernel.GuardedPOS("", in); err != nil {
		return nil, err
	}
	if err := in.validate(); err != nil {
		return nil, err
	}
	var out *ent.SaleReturn
	received := false
	err := a.DB.InTx(ctx, func(tx storage.Tx) error {
		s, err := a.lockSale(ctx, tx.Ent, in.SaleRef, in.StoreID)
		if err != nil {
			return err
		}
		prior, err := tx.Ent.SaleReturn.Query().Where(salereturn.SaleID(s.ID), salereturn.ExternalID(in.ID)).Only(ctx)
		if err == nil {
			out = prior
			return nil
		}
		if !ent.IsNotFound(err) {
			return err
		}
		if s.Status == sale.StatusFAILED {
			return &apperr.Error{Kind: apperr.KindUnprocessable, Code: "sale_not_returnable", Field: "saleId",
				Message: "the sale failed processing: it credited nothing, there is nothing to return"}
		}
		items, err := tx.Ent.SaleItem.Query().Where(saleitem.SaleID(s.ID)).Order(ent.Asc(saleitem.FieldID)).All(ctx)
		if err != nil {
			return err
		}
		lines, amount, err := in.lines(items)
		if err != nil {
			return err
		}
		byLine := map[string]*ent.SaleItem{}
		for _, it := range items {
			byLine[it.LineID] = it
		}
		for _, l := range lines {
			it := byLine[l.LineID]
			if err := tx.Ent.SaleItem.UpdateOneID(it.ID).SetReturnedQuantity(it.ReturnedQuantity.Add(l.Quantity)).Exec(ctx); err != nil {
				return err
			}
		}
		raw, err := json.Marshal(lines)
		if err != nil {
			return err
		}
		out, err = tx.Ent.SaleReturn.Create().
			SetSaleID(s.ID).SetExternalID(in.ID).SetKind(in.Kind).SetPosID(in.PosID).SetReturnedAt(in.Date.UTC()).
			SetReason(in.Reason).SetLines(raw).SetAmount(amount).SetCreatedAt(a.Stamp()).
			Save(ctx)
		if err != nil {
			return err
		}
		rc, err := a.Jobs()
		if err != nil {
			return err
		}
		_, err = rc.InsertTx(ctx, tx.SQL, jobs.ProcessSaleReturn{TenantID: s.TenantID, ReturnID: out.ID}, nil)
		received = err == nil
		return err
	})
	if err == nil && received {
		a.Recorder().ReturnReceived(string(in.Kind))
	}
	if ent.IsConstraintError(err) {
		// The same return registered by a concurrent request (SQLite
		// serialises them; this is the unique index's backstop).
		s, serr := a.findSale(ctx, a.DB.Ent, in.SaleRef, in.StoreID)
		if serr != nil {
			return nil, serr
		}
		return a.DB.Ent.SaleReturn.Query().Where(salereturn.SaleID(s.ID), salereturn.ExternalID(in.ID)).Only(ctx)
	}
	return out, err
}

// lines are the units the return takes back and their net value: what was
// paid for them, their share of the line's discounts taken off. Quantities
// beyond what remains returnable are refused naming the item.
func (in SaleReturnInput) lines(items []*ent.SaleItem) ([]returnLine, decimal.Decimal, error) {
	remaining := map[string]decimal.Decimal{}
	byLine := map[string]*ent.SaleItem{}
	for _, it := range items {
		remaining[it.LineID] = it.Quantity.Sub(it.ReturnedQuantity)
		byLine[it.LineID] = it
	}
	var lines []returnLine
	var p apperr.Problems
	if in.Kind == salereturn.KindCancellation {
		for _, it := range items {
			if q := remaining[it.LineID]; q.IsPositive() {
				lines = append(lines, returnLine{LineID: it.LineID, Quantity: q})
			}
		}
		if len(lines) == 0 {
			p.Add("cancellation", "nothing is left to cancel: every unit of the sale was returned or cancelled")
		}
	}
	for i, ri := range in.Items {
		f := "return.items[" + strconv.Itoa(i) + "]"
		left, ok := remaining[ri.ID]
		switch {
		case !ok:
			p.Add(f+".id", "the sale has no item %s", ri.ID)
		case ri.Quantity.GreaterThan(left):
			p.Add(f+".quantity", "at most %s of item %s remain returnable", left.String(), ri.ID)
		default:
			lines = append(lines, returnLine{LineID: ri.ID, Quantity: *ri.Quantity})
		}
	}
	if err := p.Err(); err != nil {
		return nil, decimal.Zero, err
	}
	amount := decimal.Zero
	for _, l := range lines {
		it := byLine[l.LineID]
		net := it.UnitPrice.Mul(it.Quantity).Sub(it.DiscountAmount)
		amount = amount.Add(net.Mul(l.Quantity).DivRound(it.Quantity, 8))
	}
	return lines, amount.Round(2), nil
}

// lockSale finds the sale of a store by receipt number (or id) and, on
// PostgreSQL, locks it until the transaction ends; SQLite's transactions
// are serialised already.
func (a *App) lockSale(ctx context.Context, c *ent.Client, ref, storeCode string) (*ent.Sale, error) {
	s, err := a.findSale(ctx, c, ref, storeCode)
	if err != nil || a.DB.Dialect != dialect.Postgres {
		return s, err
	}
	return c.Sale.Query().Where(sale.ID(s.ID)).ForUpdate(entsql.WithLockTables(sale.Table)).Only(ctx)
}

func (a *App) findSale(ctx context.Context, c *ent.Client, ref, storeCode string) (*ent.Sale, error) {
	st, err := c.Store.Query().Where(store.Code(storeCode)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, &apperr.Error{Kind: apperr.KindNotFound, Code: "not_found", Field: "store.id", Message: "no store with code " + storeCode}
	}
	if err != nil {
		return nil, err
	}
	q := c.Sale.Query().Where(sale.StoreID(st.ID))
	if strings.HasPrefix(ref, "sal_") {
		q.Where(sale.ID(ref))
	} else {
		q.Where(sale.ExternalID(ref))
	}
	s, err := q.Only(ctx)
	if ent.IsNotFound(err) {
		return nil, &apperr.Error{Kind: apperr.KindNotFound, Code: "not_found", Field: "saleId",
			Message: "no sale " + ref + " at store " + storeCode}
	}
	return s, err
}

// returnsProcessed is what processing a sale's returns did.
type returnsProcessed struct {
	applied        map[salereturn.Kind]int // returns applied, by kind
	pointsReversed int64                   // points taken back
}

// ProcessSaleReturn applies a return of tenantID (processSaleReturn) in a
// transaction of its own: a run killed midway leaves nothing, and the retry
// applies the return once. Once committed it counts what it did.
func (a *App) ProcessSaleReturn(ctx context.Context, tenantID, returnID string) error {
	ctx = schema.RememberVisible(viewer.TenantContext(ctx, tenantID))
	var done *returnsProcessed
	err := a.DB.InTx(ctx, func(tx storage.Tx) (err error) {
		done, err = a.processSaleReturn(ctx, tx, returnID)
		return err
	})
	if err != nil || done == nil {
		return err
	}
	for kind, n := range done.applied {
		a.Recorder().ReturnsProcessed(string(kind), n)
	}
	a.Recorder().PointsReversed(kernel.SourceReturn, done.pointsReversed)
	return nil
}

// processSaleReturn applies a return once its sale is processed, together
// with the sale's other returns still waiting, in the order they were
// received: points taken back in proportion to the net value returned (the
// bonus recomputed on what the customer kept), a debt for points already
// spent, the redemptions whose discounted units all came back released,
// lifetime value, level, the sale's status and the events, all in tx. A
// return already applied answers nil; a sale still being processed
// answers ErrSaleNotProcessed.
func (a *App) processSaleReturn(ctx context.Context, tx storage.Tx, returnID string) (*returnsProcessed, error) {
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
		if _, err := a.LockCustomer(ctx, c, *s.CustomerID); err != nil {
			return nil, err
		}
	}
	if a.DB.Dialect == dialect.Postgres {
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
	r := &saleReturns{a: a, c: c, s: s, now: a.Stamp()}
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
	return done, nil
}

// saleReturns applies returns to one locked sale.
type saleReturns struct {
	a        *App
	c        *ent.Client
	s        *ent.Sale
	now      time.Time
	items    []*ent.SaleItem
	store    string
	returned map[string]decimal.Decimal // units returned by the returns applied, by line
	earned   int64                      // points the sale credited (its credit and bonus)
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
		pointsentry.KindIn(pointsentry.KindCredit, pointsentry.KindBonus)).All(ctx)
	if err != nil {
		return err
	}
	for _, e := range credits {
		r.earned += e.Points
		if e.Kind == pointsentry.KindBonus {
			r.bonus += e.Points
		}
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
	s := r.s
	returnedAmount := s.ReturnedAmount.Add(ret.Amount)
	whole := r.allReturned(nil)
	var reversed int64
	var entry *ent.PointsEntry
	if s.CustomerID != nil && s.Status != sale.StatusFAILED {
		target, err := r.kept(ctx, returnedAmount, whole)
		if err != nil {
			return 0, err
		}
		reversed = max(r.earned-target-s.PointsReversed, 0)
		res, err := r.a.Ledger().Reverse(ctx, r.c, ledger.Reversal{
			CustomerID: *s.CustomerID, Points: reversed, SourceKind: pointsentry.SourceKindReturn, SourceID: &ret.ID,
			Reason: string(ret.Kind) + " " + ret.ExternalID + " of sale " + s.ExternalID + " at " + r.store, Amount: &ret.Amount,
		})
		if err != nil {
			return 0, err
		}
		entry = res.Entry
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
	keptValue := decimal.Max(s.AmountPayable.Sub(returnedAmount), decimal.Zero).Floor()
	paid := s.AmountPayable.Floor()
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
	bonus, _, err := r.a.saleBonus(ctx, r.c, campaignrules.OfAll(rows), s, r.items, r.returned, cust, tenant.PointsPerReal)
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
