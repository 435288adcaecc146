package customers

import (
	"context"
	"slices"
	"time"

	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/rollupcustomerstore"
)

// RecountPurchases sets the purchases of the customers ids on their rows
// (sales_count, last_purchase_at) from what the purchases' rollup counts
// (migration 0037: their sales processed and not returned or cancelled
// whole, kept by the database in the statement that changes a sale). It is
// called in the transaction that processed or returned their sales, after
// the sales' rows changed, with the customers locked: a count taken again
// rather than moved by one, so a sale processed twice, a return applied
// again or a run that retries counts once.
func RecountPurchases(ctx context.Context, c *ent.Client, ids ...string) error {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	if len(ids) == 0 {
		return nil
	}
	rows, err := c.RollupCustomerStore.Query().
		Where(rollupcustomerstore.CustomerIDIn(ids...), rollupcustomerstore.PurchasesGT(0)).All(ctx)
	if err != nil {
		return err
	}
	type purchases struct {
		count int64
		last  *time.Time
	}
	of := make(map[string]purchases, len(ids))
	for _, r := range rows {
		p := of[r.CustomerID]
		p.count += r.Purchases
		if p.last == nil || r.LastSoldAt.After(*p.last) {
			p.last = &r.LastSoldAt
		}
		of[r.CustomerID] = p
	}
	for _, id := range ids {
		p := of[id]
		// By predicate: UpdateOneID would read the row back.
		u := c.Customer.Update().Where(customer.ID(id)).SetSalesCount(p.count)
		if p.last != nil {
			u.SetLastPurchaseAt(p.last.UTC())
		} else {
			u.ClearLastPurchaseAt()
		}
		if err := u.Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}
