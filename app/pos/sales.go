package pos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/app/checkout"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/domain/campaignrules"
	"github.com/fideliza/fideliza/domain/eligibility"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/sale"
	"github.com/fideliza/fideliza/ent/schema"
	"github.com/fideliza/fideliza/ent/segment"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/viewer"
)

// processedSale is what processing a sale did, counted once committed.
type processedSale struct {
	// sales is how many sales were processed: the sale and its customer's
	// earlier sales still waiting.
	sales       int
	credited    int64 // points credited, sale and bonus
	spent       int64 // points paid with
	redemptions int   // redemptions recorded for the discounts it carried
}

func (p *processedSale) add(q *processedSale) {
	p.sales += q.sales
	p.credited += q.credited
	p.spent += q.spent
	p.redemptions += q.redemptions
}

// failWriteTimeout bounds the write that marks a sale FAILED after its last
// attempt.
const failWriteTimeout = 10 * time.Second

// ProcessSale works the job queued when a sale was registered: with the
// other sales of the tenant whose jobs are being worked at the same moment,
// in one transaction (processSaleGroup). After the job's last attempt
// (jobs.AttemptOf) a failure leaves the sale FAILED with the reason.
func (a *Service) ProcessSale(ctx context.Context, args jobs.ProcessSale) error {
	if err := Rules.ProcessSale.Allow(ctx); err != nil {
		return err
	}
	tenantID, saleID := args.TenantID, args.SaleID
	ctx = viewer.TenantContext(ctx, tenantID)
	err := a.processInGroup(ctx, tenantID, saleID)
	if err == nil || !jobs.AttemptOf(ctx).Last() {
		return err
	}
	// The attempt's context may be what failed (River cancels it after the
	// job's timeout), so this write gets a context of its own.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), failWriteTimeout)
	defer cancel()
	n, ferr := a.k.DB.Ent.Sale.Update().Where(sale.ID(saleID), sale.StatusEQ(sale.StatusRECEIVED)).
		SetStatus(sale.StatusFAILED).SetFailureReason(err.Error()).Save(fctx)
	if n > 0 {
		a.k.Recorder().SaleProcessed(kernel.SaleFailed)
	}
	return errors.Join(err, ferr)
}

// ProcessSales processes registered sales of the viewer's tenant in one
// transaction (processSale each), then counts what they did. The demo's
// year processes a day's sales so, at closing time.
func (a *Service) ProcessSales(ctx context.Context, saleIDs ...string) error {
	if err := Rules.ProcessSales.Allow(ctx); err != nil {
		return err
	}
	return a.processSales(ctx, saleIDs...)
}

// processSales is ProcessSales without its policy check, for the operations
// of this context that call it. Its transaction holds the tenant's
// processing lock: one transaction processing a tenant's sales at a time in
// every process, so that two never lock the same customers and rollup rows
// in opposite orders (a deadlock, which would roll a whole group back).
func (a *Service) processSales(ctx context.Context, saleIDs ...string) error {
	ctx = schema.RememberVisible(ctx)
	v, _ := viewer.FromContext(ctx)
	var done []*processedSale
	err := a.k.DB.Exclusive(ctx, "sale processing "+v.TenantID, func(tx storage.Tx) error {
		done = done[:0] // a run again after a conflict counts afresh
		run := newProcessingRun(a.k.Stamp())
		if err := run.readSales(ctx, tx.Ent, saleIDs, !a.k.InlineSales); err != nil {
			return err
		}
		for _, id := range saleIDs {
			d, err := a.processSale(ctx, tx, run, id)
			if err != nil {
				return err
			}
			if d != nil {
				done = append(done, d)
			}
		}
		return a.finishProcessing(ctx, tx, run)
	})
	if err != nil {
		return err
	}
	for _, d := range done {
		for range d.sales {
			a.k.Recorder().SaleProcessed(kernel.SaleProcessed)
		}
		a.k.Recorder().PointsCredited(kernel.SourceSale, d.credited)
		a.k.Recorder().Redemptions(kernel.SourceSale, d.redemptions)
	}
	return nil
}

// processSale processes a registered sale in tx: the customer's points (with
// bonus-points campaigns), the redemptions of the discounts it carries,
// lifetime value, level and the sale.processed event, all committing with
// the sale's PROCESSED status (written as run finishes), so a run killed
// midway leaves nothing and the retry does it all once. A sale already
// processed, or processed earlier in run, answers nil.
//
// A customer's sales are processed in the order they were registered:
// should the customer have earlier sales still waiting (the sales queue is
// ordered across tenants, not by customer, and several workers take its
// jobs at once), they are processed first, in this transaction, and their
// own jobs then find them processed.
//
// The customer's row is locked before the sale's (LockCustomer's lock
// order). The sale names its customer by document, read before either
// lock: should an erasure change that document before the sale is locked,
// storage.ErrConflict has the transaction run again.
func (a *Service) processSale(ctx context.Context, tx storage.Tx, run *processingRun, saleID string) (*processedSale, error) {
	c := tx.Ent
	s, err := run.sale(ctx, c, saleID)
	if err != nil || s.Status != sale.StatusRECEIVED || run.processed(saleID) {
		return nil, err
	}
	tenant, err := a.k.SettingsOf(ctx, c, s.TenantID)
	if err != nil {
		return nil, err
	}
	var (
		cust    *ent.Customer
		earlier []string
	)
	if s.CustomerDocument != DefaultCustomerDocument {
		var typ string
		if s.CustomerDocumentType != nil {
			typ = string(*s.CustomerDocumentType)
		}
		found := documentCustomer(c, s.CustomerDocument)
		if a.k.DB.Dialect == dialect.Postgres {
			found.ForUpdate() // LockCustomer's lock, in the same read
		}
		if cust, err = a.findOrPreRegister(ctx, c, tenant, found, s.CustomerDocument, typ, ""); err != nil {
			return nil, err
		}
		// The demo's year (InlineSales) registers a day's sales at once and
		// processes them in its own order, which its determinism needs.
		if cust != nil && s.CustomerDocumentIndex != "" && !a.k.InlineSales {
			earlier = run.earlierWaiting(s)
		}
	}
	done := &processedSale{}
	for i, id := range append(earlier, saleID) {
		if i > 0 && cust != nil { // the customer's totals and level as the sale before left them
			if cust, err = a.k.LockCustomer(ctx, c, cust.ID); err != nil {
				return nil, err
			}
		}
		one, err := a.processLockedSale(ctx, c, run, tenant, cust, s.CustomerDocument, id)
		if err != nil {
			return nil, err
		}
		if one != nil {
			done.add(one)
		}
	}
	if done.sales == 0 {
		return nil, nil
	}
	return done, nil
}

// processLockedSale processes one sale of doc's customer (cust, locked; nil
// for a sale without a known customer) unless it is no longer RECEIVED.
func (a *Service) processLockedSale(ctx context.Context, c *ent.Client, run *processingRun, tenant *ent.Tenant, cust *ent.Customer, doc, saleID string) (*processedSale, error) {
	s, err := a.lockWaitingSale(ctx, c, run, saleID)
	if err != nil {
		return nil, err
	}
	if s.Status != sale.StatusRECEIVED || run.processed(saleID) {
		return nil, nil
	}
	if s.CustomerDocument != doc {
		return nil, storage.ErrConflict
	}
	now := run.now
	done := &processedSale{sales: 1}
	// Points paid first: the hold the sale took becomes its debit, once.
	if done.spent, err = a.spendSalePoints(ctx, c, s); err != nil {
		return nil, err
	}
	if err := a.spendSaleWallets(ctx, c, s); err != nil { // and the cashback and gift cards paid
		return nil, err
	}
	if err := a.activateGiftCards(ctx, c, s); err != nil { // the cards the sale sold
		return nil, err
	}
	if cust != nil {
		if done.credited, err = a.creditSale(ctx, c, tenant, s, cust, done.spent == 0); err != nil {
			return nil, err
		}
		if done.redemptions, err = a.recordSaleRedemptions(ctx, c, s, cust, now); err != nil {
			return nil, err
		}
	}
	var customerID any
	if cust != nil {
		customerID = cust.ID
	}
	run.add(s.ID, done.credited, cust)
	run.events = append(run.events, outbox.New(c, now, s.TenantID, outbox.SaleProcessed, s.ID, map[string]any{
		"sale_id": s.ID, "receipt": s.ExternalID, "store_code": s.Edges.Store.Code, "customer_id": customerID,
		"amount_payable": s.AmountPayable.String(), "points_credited": done.credited,
	}))
	return done, nil
}

// documentCustomer is the query of the customer of a document.
func documentCustomer(c *ent.Client, doc string) *ent.CustomerQuery {
	return c.Customer.Query().Where(customers.CustomerWithDocument(doc))
}

// oneCustomer is a query of at most one customer (documentCustomer's, with
// a caller's selection or lock).
type oneCustomer interface {
	Only(ctx context.Context) (*ent.Customer, error)
}

// lockWaitingSale is a sale to process, with its items, payments and store: as
// run read it at its start, locked on PostgreSQL (a second run waits, then
// finds it processed) and its status and document read again with the lock
// (a sale's lines, payments and store do not change while it waits); on
// SQLite as read (the run's transaction has been the only writer since).
// A sale the run did not read (a customer's earlier one) is read whole.
func (a *Service) lockWaitingSale(ctx context.Context, c *ent.Client, run *processingRun, saleID string) (*ent.Sale, error) {
	pg := a.k.DB.Dialect == dialect.Postgres
	s := run.read[saleID]
	if s == nil {
		q := c.Sale.Query().Where(sale.ID(saleID)).WithItems().WithStore().WithPayments()
		if pg {
			q.ForUpdate(entsql.WithLockTables(sale.Table))
		}
		return q.Only(ctx)
	}
	if !pg {
		return s, nil
	}
	now, err := c.Sale.Query().Where(sale.ID(saleID)).Select(sale.FieldStatus, sale.FieldCustomerDocumentIndex).
		ForUpdate(entsql.WithLockTables(sale.Table)).Only(ctx)
	if err != nil {
		return nil, err
	}
	if now.CustomerDocumentIndex != s.CustomerDocumentIndex { // an erasure since the run read it
		return nil, storage.ErrConflict
	}
	locked := *s
	locked.Status = now.Status
	return &locked, nil
}

// findOrPreRegister finds the customer of a document with found (its
// documentCustomer query, with the caller's selection or lock); an unknown
// one is pre-registered when the tenant enables it, else nil. A concurrent
// pre-registration of the same document surfaces as a constraint error.
func (a *Service) findOrPreRegister(ctx context.Context, c *ent.Client, tenant *ent.Tenant, found oneCustomer, doc, typ, phone string) (*ent.Customer, error) {
	cust, err := found.Only(ctx)
	if !ent.IsNotFound(err) || !tenant.PreRegistration {
		if ent.IsNotFound(err) {
			return nil, nil
		}
		return cust, err
	}
	create := c.Customer.Create().SetDocument(doc)
	if typ != "" {
		create.SetDocumentType(customer.DocumentType(typ))
	}
	if phone != "" {
		if !strings.HasPrefix(phone, "+") {
			phone = "+55" + phone
		}
		create.SetPhone(phone)
	}
	return create.Save(ctx)
}

// creditSale credits the sale's points and the bonus of the customer's
// bonus-points campaigns for the pdv channel, each once per sale. The
// customer's row is as locked (unchanged says nothing has moved it since),
// and the sale's points are credited from it without reading it again.
func (a *Service) creditSale(ctx context.Context, c *ent.Client, tenant *ent.Tenant, s *ent.Sale, cust *ent.Customer, unchanged bool) (int64, error) {
	credit := loyalty.SalePoints{Tenant: tenant, CustomerID: cust.ID, SaleID: s.ID, Reason: "sale " + s.ExternalID + " at " + s.Edges.Store.Code}
	if unchanged {
		credit.Customer = cust
	}
	// Money earns points; points paid with, and gift cards sold, do not.
	// The sale's RECEIVED check in this transaction credits it once.
	earning := decimal.Max(s.AmountPayable.Sub(pointsPaid(s)).Sub(giftCardsSold(s.Edges.Items, nil)), decimal.Zero)
	total, err := a.Loyalty.CreditSale(ctx, c, credit, earning)
	if err != nil {
		return 0, err
	}
	credit.Customer = nil // the credit has moved it
	live, err := a.k.LiveCampaignsIn(ctx, c)
	if err != nil {
		return 0, err
	}
	bonus, names, err := a.saleBonus(ctx, c, live.Bonus, s, s.Edges.Items, nil, cust, tenant.PointsPerReal)
	if err != nil || bonus == 0 {
		return total, err
	}
	credit.Reason = "bonus points: " + names
	n, err := a.Loyalty.CreditSaleBonus(ctx, c, credit, bonus)
	if err != nil {
		return 0, err
	}
	return total + n, nil
}

// saleBonus is the bonus the customer's pdv bonus-points campaigns
// (compiled: campaignrules.BonusOf) give on the sale's items (at their
// price after discounts, less the units returned) as of the sale's instant,
// with the campaigns' names.
func (a *Service) saleBonus(ctx context.Context, c *ent.Client, compiled *eligibility.Index, s *ent.Sale, items []*ent.SaleItem,
	returned map[string]decimal.Decimal, cust *ent.Customer, rate decimal.Decimal) (int64, string, error) {
	bonus := compiled.Campaigns()
	if len(bonus) == 0 {
		return 0, "", nil
	}
	member := *cust // with its segments and score, for customerSegments
	var err error
	if member.Edges.Segments, err = cust.QuerySegments().Select(segment.FieldID).All(ctx); err != nil {
		return 0, "", err
	}
	if member.Edges.Score, err = cust.QueryScore().Only(ctx); err != nil && !ent.IsNotFound(err) {
		return 0, "", err
	}
	segs := checkout.CustomerSegments(&member)
	var cart eligibility.Cart
	for _, it := range items {
		kept := it.Quantity.Sub(returned[it.LineID])
		if !kept.IsPositive() || it.GiftCardID != nil { // a gift card sold is no purchase
			continue
		}
		cart.Items = append(cart.Items, eligibility.Item{GTIN: it.Gtin, SKU: it.Gtin, Quantity: kept,
			UnitPrice: it.UnitPrice.Sub(it.DiscountAmount.DivRound(it.Quantity, 8))})
	}
	if err := a.Campaigns.EnrichFromCatalogue(ctx, c, cart.Items, bonus); err != nil {
		return 0, "", err
	}
	at := s.Edges.Store // the campaigns of the sale's store
	if at == nil && eligibility.TargetsStores(bonus) {
		if at, err = s.QueryStore().Only(ctx); err != nil {
			return 0, "", err
		}
	}
	where := eligibility.Context{Now: s.SoldAt, Channel: channelPOS, Segments: segs, PointsPerReal: rate, CustomerID: cust.ID}
	if at != nil {
		where.Store, where.StoreGroups = at.Code, at.Groups
	}
	eligible, _, err := campaignrules.Evaluate(ctx, c, compiled, cart, where)
	if err != nil {
		return 0, "", err
	}
	var total int64
	var names []string
	for _, e := range eligible {
		if e.Benefit.BonusPoints != nil && *e.Benefit.BonusPoints > 0 {
			total += *e.Benefit.BonusPoints
			names = append(names, e.Campaign.Name)
		}
	}
	return total, strings.Join(names, ", "), nil
}

// saleRedemptionBenefit is the benefit stored with a redemption recorded from
// a sale: the discount the point of sale gave.
type saleRedemptionBenefit struct {
	Amount         decimal.Decimal `json:"amount"`
	DiscountAmount decimal.Decimal `json:"discount_amount"`
}

// recordSaleRedemptions records one redemption per campaign whose discount
// the sale carries, and returns how many it recorded. It counts toward the
// campaign's limit; a discount the POS gave after the limit was reached is
// still recorded, flagged over_limit.
func (a *Service) recordSaleRedemptions(ctx context.Context, c *ent.Client, s *ent.Sale, cust *ent.Customer, now time.Time) (n int, err error) {
	given := map[string]decimal.Decimal{}
	var order []string
	for _, it := range s.Edges.Items {
		ds, err := storedDiscounts(it.Discounts)
		if err != nil {
			return 0, fmt.Errorf("discounts of item %s: %w", it.LineID, err)
		}
		for _, d := range ds {
			if d.external() || d.UnitDiscount == nil || d.Quantity == nil {
				continue
			}
			if _, seen := given[*d.PromotionID]; !seen {
				order = append(order, *d.PromotionID)
			}
			given[*d.PromotionID] = given[*d.PromotionID].Add(d.UnitDiscount.Mul(*d.Quantity))
		}
	}
	if len(order) == 0 {
		return 0, nil
	}
	live, err := a.k.LiveCampaignsIn(ctx, c)
	if err != nil {
		return 0, err
	}
	for _, id := range order {
		camp, err := a.saleCampaign(ctx, c, live.All.Campaigns(), id)
		if err != nil {
			return 0, err
		}
		if camp == nil {
			continue // not a campaign of this tenant: an unknown promotion is not ours to count
		}
		claimed, err := campaigns.ClaimRedemption(ctx, c, id)
		if err != nil {
			return 0, err
		}
		if !claimed { // given over the limit: counted all the same
			if err := c.Campaign.UpdateOneID(id).AddRedemptionsCount(1).Exec(ctx); err != nil {
				return 0, err
			}
		}
		store := s.Edges.Store.Code
		if err := a.Campaigns.SpendBudget(ctx, c, *camp, store, given[id], now, false); err != nil {
			return 0, err
		}
		couponID, err := campaigns.UseSaleCoupon(ctx, c, s, *camp, now)
		if err != nil {
			return 0, err
		}
		benefit, err := json.Marshal(saleRedemptionBenefit{Amount: given[id], DiscountAmount: given[id]})
		if err != nil {
			return 0, err
		}
		red, err := c.Redemption.Create().SetCampaignID(id).SetCustomerID(cust.ID).SetOrderID(s.ExternalID).SetSaleID(s.ID).
			SetAmountPaid(s.AmountPayable).SetDiscountAmount(given[id]).SetCashbackAmount(decimal.Zero).
			SetBenefit(benefit).SetOverLimit(!claimed).SetCreatedAt(now).SetStoreCode(store).SetNillableCouponID(couponID).Save(ctx)
		if err != nil {
			return 0, fmt.Errorf("redemption of %s: %w", id, err)
		}
		if err := campaigns.RecordRedemption(ctx, c, red); err != nil {
			return 0, err
		}
		n++
	}
	return n, nil
}

// saleCampaign is the definition of campaign id a sale's discount names:
// from the live ones, else (paused or ended since) read through c; nil when
// it is no campaign of the tenant.
func (a *Service) saleCampaign(ctx context.Context, c *ent.Client, live []eligibility.Campaign, id string) (*eligibility.Campaign, error) {
	if i := slices.IndexFunc(live, func(l eligibility.Campaign) bool { return l.ID == id }); i >= 0 {
		schema.RememberSeen(ctx, id) // the tenant's: its redemption's link is not looked up
		return &live[i], nil
	}
	row, err := c.Campaign.Get(ctx, id)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	def := campaignrules.Of(row)
	return &def, nil
}

// storedDiscounts reads the discounts stored with a sale item.
func storedDiscounts(raw []byte) ([]POSDiscount, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var ds []POSDiscount
	if err := json.Unmarshal(raw, &ds); err != nil {
		return nil, errors.Join(errors.New("unreadable stored discounts"), err)
	}
	return ds, nil
}
