package insights

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customer"
)

// TopCustomersBy is what ranks the customers of TopCustomers.
type TopCustomersBy string

const (
	BySpend TopCustomersBy = "SPEND" // what they paid, then their sales
	BySales TopCustomersBy = "SALES" // their sales, then what they paid
)

// maxTopCustomers bounds the customers TopCustomers answers.
const maxTopCustomers = 100

// TopCustomer is a customer with what they paid and their sales in a
// period.
type TopCustomer struct {
	Customer *ent.Customer
	Spend    decimal.Decimal
	Sales    int
}

// TopCustomers ranks the customers by what they paid, or by their sales,
// within [from, to) (at most 366 days): the sales registered for them in
// the period, cancelled ones left out, at what was payable (as a
// campaign's lift counts them). Ties go to the other measure, then to the
// older customer. Money is summed exactly, so the sales are read (in
// batches), not summed by SQLite, where decimals are text.
func (a *Service) TopCustomers(ctx context.Context, from, to time.Time, first int, by TopCustomersBy) ([]TopCustomer, error) {
	if err := Rules.TopCustomers.Allow(ctx); err != nil {
		return nil, err
	}
	if err := checkPeriod(from, to, maxDashboardPeriod); err != nil {
		return nil, err
	}
	if first < 1 || first > maxTopCustomers {
		return nil, apperr.Invalid("first", "must be between 1 and %d", maxTopCustomers)
	}
	if by != BySpend && by != BySales {
		return nil, apperr.Invalid("by", "must be SPEND or SALES")
	}
	paid, err := a.paidFromRows(ctx, from, to)
	if err != nil {
		return nil, err
	}
	ranked := make([]TopCustomer, 0, len(paid))
	for id, p := range paid {
		ranked = append(ranked, TopCustomer{Customer: &ent.Customer{ID: id}, Spend: p.Amount, Sales: p.Sales})
	}
	slices.SortFunc(ranked, func(x, y TopCustomer) int {
		spend, sales := y.Spend.Cmp(x.Spend), cmp.Compare(y.Sales, x.Sales)
		if by == BySales {
			spend, sales = sales, spend
		}
		return cmp.Or(spend, sales, cmp.Compare(x.Customer.ID, y.Customer.ID))
	})
	ranked = ranked[:min(first, len(ranked))]
	ids := make([]string, len(ranked))
	for i, r := range ranked {
		ids[i] = r.Customer.ID
	}
	found, err := a.k.DB.Ent.Customer.Query().Where(customer.IDIn(ids...)).All(ctx)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*ent.Customer, len(found))
	for _, c := range found {
		byID[c.ID] = c
	}
	for i := range ranked {
		ranked[i].Customer = byID[ranked[i].Customer.ID]
	}
	return ranked, nil
}
