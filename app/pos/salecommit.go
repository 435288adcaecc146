package pos

import (
	"context"
	"encoding/json"
	"maps"
	"slices"

	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/app/kernel"

	"github.com/shopspring/decimal"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/predicate"
	"github.com/fideliza/fideliza/ent/sale"
	"github.com/fideliza/fideliza/ent/schema"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/tracing"
	"github.com/fideliza/fideliza/viewer"
)

// maxSaleGroup bounds the sales one registration transaction writes.
const maxSaleGroup = 128

// Sale registration commits in groups (kernel.GroupCommit): one insert per table
// and one job insert for all the sales of a group. A group that fails is
// written again one sale per transaction, so a sale's error (or a duplicate
// receipt another process committed) is only its own.

// saleWrite is one registration waiting for its group.
type saleWrite struct {
	ctx      context.Context
	in       SaleInput
	storeID  string
	doc, typ string
	discount decimal.Decimal
	// giftCards are the gift cards the sale's lines sell, by line id.
	giftCards map[string]string
	done      chan saleWritten
}

type saleWritten struct {
	sale     *ent.Sale
	received bool // new: not a receipt registered before
	err      error
}

// commitSale queues w in its tenant's next group and waits for its answer.
// Traced, its span (pos.sale.commit) is the parent of the sale's job.
func (a *Service) commitSale(w *saleWrite) saleWritten {
	v, _ := viewer.FromContext(w.ctx)
	var span trace.Span
	w.ctx, span = tracing.Start(w.ctx, "pos.sale.commit")
	defer span.End()
	a.saleGroups.Add(v.TenantID, w, maxSaleGroup, a.writeSales)
	res := <-w.done
	tracing.Fail(span, res.err)
	return res
}

// writeSales writes a group of sales and answers each.
func (a *Service) writeSales(group []*saleWrite) {
	results := a.writeSaleGroup(group)
	if len(group) > 1 && results == nil {
		results = make([]saleWritten, len(group))
		for i, w := range group {
			results[i] = a.writeSaleGroup([]*saleWrite{w})[0]
		}
	}
	for i, w := range group {
		if results[i].err == nil && results[i].received {
			a.k.Recorder().SaleReceived()
		}
		w.done <- results[i]
	}
}

// writeSaleGroup writes a group in one transaction. A failed group of
// several answers nil (the caller writes them one by one); a group of one
// answers its error.
func (a *Service) writeSaleGroup(group []*saleWrite) []saleWritten {
	// The transaction is the group's, not one request's: a client hanging
	// up does not cancel the others' sales. The items and payments all link
	// to sales written here: checked once.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(group[0].ctx), kernel.GroupTimeout)
	defer cancel()
	ctx = schema.RememberVisible(ctx)
	// Traced, the group's transaction is a span of its first sale's trace,
	// linked to the others'.
	ctx, span := tracing.Start(ctx, "pos.sale.write_group")
	defer span.End()
	if span.IsRecording() {
		span.SetAttributes(attribute.Int("fideliza.sales", len(group)))
		for _, w := range group[1:] {
			span.AddLink(trace.LinkFromContext(w.ctx))
		}
	}
	results := make([]saleWritten, len(group))
	dupOf := map[int]int{} // a receipt sent twice in the group → its first
	err := a.k.DB.InTx(ctx, func(tx storage.Tx) error {
		clear(results) // a run again after a conflict starts afresh
		clear(dupOf)
		// The receipts registered before, in one query for the group: by
		// store, each store's receipts, so that every lookup is a probe of
		// the (tenant, store, receipt) index. (Store IN (…) AND receipt IN
		// (…) let SQLite read every sale of the stores: 20% of the service's
		// CPU after a minute of a sale load, and growing with the table.)
		receipts := map[string][]string{}
		for _, w := range group {
			receipts[w.storeID] = append(receipts[w.storeID], w.in.SaleID)
		}
		byStore := make([]predicate.Sale, 0, len(receipts))
		for _, store := range slices.Sorted(maps.Keys(receipts)) { // the same groups, the same statement
			byStore = append(byStore, sale.And(sale.StoreID(store), sale.ExternalIDIn(receipts[store]...)))
		}
		priors, err := tx.Ent.Sale.Query().Where(sale.Or(byStore...)).All(ctx)
		if err != nil {
			return err
		}
		stored := map[[2]string]*ent.Sale{}
		for _, p := range priors {
			stored[[2]string{p.StoreID, p.ExternalID}] = p
		}
		first := map[[2]string]int{} // receipt → its first write in the group
		var creates []*ent.SaleCreate
		var fresh []int // group indexes of the sales created, in creates' order
		for i, w := range group {
			receipt := [2]string{w.storeID, w.in.SaleID}
			if j, dup := first[receipt]; dup {
				dupOf[i] = j
				continue
			}
			first[receipt] = i
			if prior := stored[receipt]; prior != nil {
				results[i].sale = prior
				continue
			}
			create := tx.Ent.Sale.Create().
				SetStoreID(w.storeID).SetExternalID(w.in.SaleID).SetPosID(w.in.PosID).SetChannel(w.in.Channel).
				SetEmployeeID(w.in.EmployeeID).SetSellerID(w.in.SellerID).
				SetCustomerDocument(w.doc).SetSoldAt(w.in.Date.UTC()).SetAmount(*w.in.Amount).
				SetAmountPayable(*w.in.AmountPayable).SetDiscountAmount(w.discount).SetCreatedAt(a.k.Stamp())
			if w.typ != "" {
				create.SetCustomerDocumentType(sale.CustomerDocumentType(w.typ))
			}
			if len(w.in.FiscalDocument) > 0 {
				create.SetFiscalDocument(w.in.FiscalDocument)
			}
			if w.in.CouponCode != "" {
				create.SetCouponCode(campaigns.NormalizeCouponCode(w.in.CouponCode))
			}
			creates, fresh = append(creates, create), append(fresh, i)
		}
		if len(creates) == 0 {
			return nil
		}
		sales, err := tx.Ent.Sale.CreateBulk(creates...).Save(ctx)
		if err != nil {
			return err
		}
		var items []*ent.SaleItemCreate
		var payments []*ent.SalePaymentCreate
		saleIDs := make([]string, len(sales))
		for k, s := range sales {
			w := group[fresh[k]]
			for _, it := range w.in.Items {
				lineDiscount := decimal.Zero
				for _, d := range it.Discounts {
					lineDiscount = lineDiscount.Add(d.UnitDiscount.Mul(*d.Quantity))
				}
				raw, err := json.Marshal(it.Discounts)
				if err != nil {
					return err
				}
				items = append(items, tx.Ent.SaleItem.Create().SetSaleID(s.ID).SetLineID(it.ID).SetGtin(it.GTIN).
					SetDescription(it.Description).SetUnitPrice(*it.UnitPrice).SetQuantity(*it.Quantity).
					SetDiscountAmount(lineDiscount).SetDiscounts(raw).SetNillableGiftCardID(w.giftCardOf(it.ID)))
			}
			for _, pm := range w.in.Payments {
				p := tx.Ent.SalePayment.Create().SetSaleID(s.ID).SetPaymentID(pm.ID).SetAmount(*pm.Amount).
					SetMethod(pm.Method).SetBin(pm.Bin).SetNsu(pm.NSU)
				if pm.Installments != nil {
					p.SetInstallments(*pm.Installments)
				}
				if pm.HoldID != "" {
					// The sale takes the hold now; processing debits it.
					p.SetHoldID(pm.HoldID)
					if err := a.takeSaleHold(ctx, tx.Ent, w, pm, s.ID); err != nil {
						return err
					}
				}
				payments = append(payments, p)
			}
			saleIDs[k] = s.ID
			results[fresh[k]] = saleWritten{sale: s, received: true}
		}
		if err := tx.Ent.SaleItem.CreateBulk(items...).Exec(ctx); err != nil {
			return err
		}
		if err := tx.Ent.SalePayment.CreateBulk(payments...).Exec(ctx); err != nil {
			return err
		}
		if a.k.InlineSales {
			return nil
		}
		rc, err := a.k.Jobs()
		if err != nil {
			return err
		}
		head, err := jobs.SaleQueueHead(ctx, rc, tx.SQL)
		if err != nil {
			return err
		}
		saleJobs := a.fairSales.SaleJobs(sales[0].TenantID, head, saleIDs)
		for k, job := range saleJobs {
			job.InsertOpts.Metadata = tracing.JobMetadata(group[fresh[k]].ctx) // each sale's job in its own trace
		}
		_, err = rc.InsertManyTx(ctx, tx.SQL, saleJobs)
		return err
	})
	tracing.Fail(span, err)
	if err != nil {
		if len(group) > 1 {
			return nil
		}
		return []saleWritten{{err: err}}
	}
	for i, j := range dupOf {
		results[i] = saleWritten{sale: results[j].sale}
	}
	return results
}
