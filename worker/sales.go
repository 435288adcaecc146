package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/riverqueue/river"
	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/domain/campaignrules"
	"github.com/fideliza/fideliza/domain/eligibility"
	"github.com/fideliza/fideliza/domain/ledger"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/domain/points"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/campaign"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/sale"
	"github.com/fideliza/fideliza/ent/schema"
	"github.com/fideliza/fideliza/ent/schema/viewer"
	"github.com/fideliza/fideliza/ent/segment"
	"github.com/fideliza/fideliza/metrics"
	"github.com/fideliza/fideliza/storage"
)

// defaultCustomer is the document of a sale without an identified customer.
const defaultCustomer = "00000000000"

// failWriteTimeout bounds the write that marks a sale FAILED after its last
// attempt.
const failWriteTimeout = 10 * time.Second

// ProcessSaleArgs processes a registered sale: the customer's points (with
// bonus-points campaigns), the redemptions of the discounts it carries,
// lifetime value, level, and the sale.processed event. It is inserted with
// the sale, in its transaction.
type ProcessSaleArgs struct {
	TenantID string `json:"tenant_id"`
	SaleID   string `json:"sale_id"`
}

func (ProcessSaleArgs) Kind() string { return "process_sale" }

// ProcessSaleWorker works ProcessSaleArgs. Everything a run writes commits
// in one transaction with the sale's PROCESSED status, so a run killed
// midway leaves nothing and the retry does it all once; a run that finds the
// sale processed does nothing.
type ProcessSaleWorker struct {
	river.WorkerDefaults[ProcessSaleArgs]
	DB      *storage.DB
	Now     func() time.Time
	Metrics *metrics.Registry // nil: not counted
}

// processed is what a run that processed a sale did.
type processed struct {
	credited    int64
	redemptions int
}

func (w *ProcessSaleWorker) Work(ctx context.Context, job *river.Job[ProcessSaleArgs]) error {
	ctx = schema.RememberVisible(viewer.TenantContext(ctx, job.Args.TenantID))
	var done *processed
	err := w.DB.InTx(ctx, func(tx storage.Tx) (err error) {
		done, err = w.process(ctx, tx.Ent, job.Args.SaleID)
		return err
	})
	if err == nil && done != nil {
		w.Metrics.SaleProcessed(metrics.SaleProcessed)
		w.Metrics.PointsCredited(metrics.SourceSale, done.credited)
		w.Metrics.Redemptions(metrics.SourceSale, done.redemptions)
	}
	if err != nil && job.Attempt >= job.MaxAttempts {
		// The last attempt: the sale stays FAILED with the reason. The
		// attempt's context may be what failed (River cancels it after
		// JobTimeout), so this write gets a context of its own.
		reason := err.Error()
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), failWriteTimeout)
		defer cancel()
		if ferr := w.DB.Ent.Sale.UpdateOneID(job.Args.SaleID).Where(sale.StatusEQ(sale.StatusRECEIVED)).
			SetStatus(sale.StatusFAILED).SetFailureReason(reason).Exec(fctx); ferr == nil {
			w.Metrics.SaleProcessed(metrics.SaleFailed)
		} else if !ent.IsNotFound(ferr) {
			return errors.Join(err, ferr)
		}
	}
	return err
}

// process processes the sale in c's transaction; nil when it already was.
func (w *ProcessSaleWorker) process(ctx context.Context, c *ent.Client, saleID string) (*processed, error) {
	q := c.Sale.Query().Where(sale.ID(saleID)).WithItems().WithStore()
	if w.DB.Dialect == dialect.Postgres {
		q.ForUpdate(entsql.WithLockTables(sale.Table)) // a second run waits, then finds the sale processed
	}
	s, err := q.Only(ctx)
	if err != nil {
		return nil, err
	}
	if s.Status != sale.StatusRECEIVED {
		return nil, nil
	}
	now := w.Now().UTC().Truncate(time.Microsecond)
	l := ledger.Ledger{Dialect: w.DB.Dialect, Now: w.Now}
	var cust *ent.Customer
	if s.CustomerDocument != defaultCustomer {
		cust, err = w.customer(ctx, c, s)
		if err != nil {
			return nil, err
		}
	}
	var credited int64
	var redemptions int
	if cust != nil {
		if credited, err = w.credit(ctx, c, l, s, cust); err != nil {
			return nil, err
		}
		if redemptions, err = w.recordRedemptions(ctx, c, s, cust, now); err != nil {
			return nil, err
		}
	}
	u := c.Sale.UpdateOneID(s.ID).SetStatus(sale.StatusPROCESSED).SetProcessedAt(now).SetPointsCredited(credited)
	var customerID any
	if cust != nil {
		u.SetCustomerID(cust.ID)
		customerID = cust.ID
	}
	if err := u.Exec(ctx); err != nil {
		return nil, err
	}
	err = outbox.Record(ctx, c, now, s.TenantID, outbox.SaleProcessed, s.ID, map[string]any{
		"sale_id": s.ID, "receipt": s.ExternalID, "store_code": s.Edges.Store.Code, "customer_id": customerID,
		"amount_payable": s.AmountPayable.String(), "points_credited": credited,
	})
	if err != nil {
		return nil, err
	}
	return &processed{credited: credited, redemptions: redemptions}, nil
}

// customer finds the sale's customer, pre-registering an unknown one when
// the tenant enables it; nil when it stays unknown.
func (w *ProcessSaleWorker) customer(ctx context.Context, c *ent.Client, s *ent.Sale) (*ent.Customer, error) {
	cust, err := c.Customer.Query().Where(customer.Document(s.CustomerDocument)).Only(ctx)
	if !ent.IsNotFound(err) {
		return cust, err
	}
	tenant, err := c.Tenant.Get(ctx, s.TenantID)
	if err != nil || !tenant.PreRegistration {
		return nil, err
	}
	create := c.Customer.Create().SetDocument(s.CustomerDocument)
	if s.CustomerDocumentType != nil {
		create.SetDocumentType(customer.DocumentType(*s.CustomerDocumentType))
	}
	return create.Save(ctx)
}

// credit credits the sale's points and the bonus of the customer's
// bonus-points campaigns for the pdv channel, each once per sale.
func (w *ProcessSaleWorker) credit(ctx context.Context, c *ent.Client, l ledger.Ledger, s *ent.Sale, cust *ent.Customer) (int64, error) {
	tenant, err := c.Tenant.Get(ctx, s.TenantID)
	if err != nil {
		return 0, err
	}
	var total int64
	if pts := points.Earned(s.AmountPayable, tenant.PointsPerReal); pts > 0 {
		res, err := l.Credit(ctx, c, ledger.Credit{
			CustomerID: cust.ID, Kind: pointsentry.KindCredit, Points: pts, SourceKind: pointsentry.SourceKindSale,
			SourceID: &s.ID, Amount: &s.AmountPayable, Reason: "sale " + s.ExternalID + " at " + s.Edges.Store.Code,
		})
		if err != nil {
			return 0, err
		}
		total += res.Entry.Points
	} else if s.AmountPayable.IsPositive() {
		// No points (under R$ 1, or a rate of 0), but the money was spent:
		// the lifetime value grows all the same. The sale's RECEIVED check
		// in this transaction keeps it to once.
		locked, err := l.LockCustomer(ctx, c, cust.ID)
		if err != nil {
			return 0, err
		}
		if err := c.Customer.UpdateOneID(cust.ID).SetLifetimeValue(locked.LifetimeValue.Add(s.AmountPayable)).Exec(ctx); err != nil {
			return 0, err
		}
	}
	bonus, names, err := w.bonus(ctx, c, s, cust, tenant.PointsPerReal)
	if err != nil || bonus == 0 {
		return total, err
	}
	res, err := l.Credit(ctx, c, ledger.Credit{
		CustomerID: cust.ID, Kind: pointsentry.KindBonus, Points: bonus, SourceKind: pointsentry.SourceKindSale,
		SourceID: &s.ID, Reason: "bonus points: " + names,
	})
	if err != nil {
		return 0, err
	}
	return total + res.Entry.Points, nil
}

// bonus is the bonus the customer's active pdv bonus-points campaigns give
// on the sale's items.
func (w *ProcessSaleWorker) bonus(ctx context.Context, c *ent.Client, s *ent.Sale, cust *ent.Customer, rate decimal.Decimal) (int64, string, error) {
	camps, err := c.Campaign.Query().Where(campaign.TypeEQ(campaign.TypeBonusPoints),
		campaign.StatusNotIn(campaign.StatusPaused, campaign.StatusEnded)).All(ctx)
	if err != nil || len(camps) == 0 {
		return 0, "", err
	}
	segs, err := cust.QuerySegments().Select(segment.FieldID).Strings(ctx)
	if err != nil {
		return 0, "", err
	}
	var cart eligibility.Cart
	for _, it := range s.Edges.Items {
		cart.Items = append(cart.Items, eligibility.Item{GTIN: it.Gtin, SKU: it.Gtin, Quantity: it.Quantity,
			UnitPrice: it.UnitPrice.Sub(it.DiscountAmount.DivRound(it.Quantity, 8))})
	}
	engine := make([]eligibility.Campaign, len(camps))
	for i, cp := range camps {
		engine[i] = campaignrules.Of(cp)
	}
	eligible, _ := eligibility.Evaluate(engine, cart, eligibility.Context{
		Now: s.SoldAt, Channel: "pdv", Segments: segs, PointsPerReal: rate,
	})
	var total int64
	names := ""
	for _, e := range eligible {
		if e.Benefit.BonusPoints != nil && *e.Benefit.BonusPoints > 0 {
			total += *e.Benefit.BonusPoints
			if names != "" {
				names += ", "
			}
			names += e.Campaign.Name
		}
	}
	return total, names, nil
}

// posDiscount is a discount of a sale item as the point of sale sent it.
type posDiscount struct {
	PromotionID        *string
	PartnerPromotionID *string
	UnitDiscount       *decimal.Decimal
	Quantity           *decimal.Decimal
}

// recordRedemptions records one redemption per campaign whose discount the
// sale carries, and returns how many it recorded. It counts toward the
// campaign's limit; a discount the POS gave after the limit was reached is
// still recorded, flagged over_limit.
func (w *ProcessSaleWorker) recordRedemptions(ctx context.Context, c *ent.Client, s *ent.Sale, cust *ent.Customer, now time.Time) (int, error) {
	given := map[string]decimal.Decimal{}
	var order []string
	for _, it := range s.Edges.Items {
		var ds []posDiscount
		if len(it.Discounts) > 0 {
			if err := json.Unmarshal(it.Discounts, &ds); err != nil {
				return 0, err
			}
		}
		for _, d := range ds {
			if d.PromotionID == nil || (d.PartnerPromotionID != nil && *d.PartnerPromotionID == "0") || d.UnitDiscount == nil || d.Quantity == nil {
				continue
			}
			if _, seen := given[*d.PromotionID]; !seen {
				order = append(order, *d.PromotionID)
			}
			given[*d.PromotionID] = given[*d.PromotionID].Add(d.UnitDiscount.Mul(*d.Quantity))
		}
	}
	n := 0
	for _, id := range order {
		camp, err := c.Campaign.Get(ctx, id)
		if ent.IsNotFound(err) {
			continue // not a campaign of this tenant: an unknown promotion is not ours to count
		}
		if err != nil {
			return 0, err
		}
		taken, err := c.Campaign.Update().Where(campaign.ID(id), campaign.Or(campaign.LimitTotalIsNil(),
			campaign.RedemptionsCountLT(limitOrZero(camp.LimitTotal)))).AddRedemptionsCount(1).Save(ctx)
		if err != nil {
			return 0, err
		}
		overLimit := taken == 0
		if overLimit {
			if err := c.Campaign.UpdateOneID(id).AddRedemptionsCount(1).Exec(ctx); err != nil {
				return 0, err
			}
		}
		benefit, err := json.Marshal(map[string]any{"amount": given[id].String(), "discount_amount": given[id].String()})
		if err != nil {
			return 0, err
		}
		err = c.Redemption.Create().SetCampaignID(id).SetCustomerID(cust.ID).SetOrderID(s.ExternalID).SetSaleID(s.ID).
			SetAmountPaid(s.AmountPayable).SetDiscountAmount(given[id]).SetCashbackAmount(decimal.Zero).
			SetBenefit(benefit).SetOverLimit(overLimit).SetCreatedAt(now).Exec(ctx)
		if err != nil {
			return 0, fmt.Errorf("redemption of %s: %w", id, err)
		}
		n++
	}
	return n, nil
}

func limitOrZero(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}
