package customers

import (
	"context"
	"strconv"
	"strings"
	"time"

	"entgo.io/ent/dialect/sql"
	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/predicate"
	"github.com/fideliza/fideliza/ent/segment"
)

// CustomerFilter narrows a customer list.
type CustomerFilter struct {
	SegmentID    string
	Predictive   string // a predictive segment's key (v2)
	CreatedAfter *time.Time
	Search       string // name (accent- and case-insensitive), e-mail, CPF or external id
	// MinLifetimeValue and MaxLifetimeValue bound the lifetime value, in
	// whole cents (R$ with at most two decimal places), both included.
	MinLifetimeValue, MaxLifetimeValue *decimal.Decimal
	// MinSalesCount and MaxSalesCount bound the purchases, both included.
	MinSalesCount, MaxSalesCount *int64
	// LastPurchaseAfter and LastPurchaseBefore bound the last purchase,
	// both excluded; a customer without one is outside either.
	LastPurchaseAfter, LastPurchaseBefore *time.Time
	// OrderBy is "" (newest first) or one of customerOrders (ties: newest
	// first), in Direction: "desc" (the default) or "asc".
	OrderBy, Direction string
}

// customerOrder is an order of the customer list other than by id: a
// whole-number column of the customer, in the index (tenant_id, column, id).
type customerOrder struct {
	by    func(...sql.OrderTermOption) customer.OrderOption
	value func(*ent.Customer) int64
	// lt, gt and eq are the column's predicates after a cursor.
	lt, gt, eq func(int64) predicate.Customer
}

// customerOrders are the orders of the customer list by value: lifetime
// value (in cents), purchases and last purchase (in whole seconds; none
// is 0, the oldest).
var customerOrders = map[string]customerOrder{
	"lifetime_value": {customer.ByLifetimeValueCents, func(c *ent.Customer) int64 { return c.LifetimeValueCents },
		customer.LifetimeValueCentsLT, customer.LifetimeValueCentsGT, customer.LifetimeValueCents},
	"sales_count": {customer.BySalesCount, func(c *ent.Customer) int64 { return c.SalesCount },
		customer.SalesCountLT, customer.SalesCountGT, customer.SalesCount},
	"last_purchase_at": {customer.ByLastPurchaseUnix, func(c *ent.Customer) int64 { return c.LastPurchaseUnix },
		customer.LastPurchaseUnixLT, customer.LastPurchaseUnixGT, customer.LastPurchaseUnix},
}

// cents is a bound of the lifetime value in cents: an amount in R$ of at
// most two decimal places.
func cents(field string, v decimal.Decimal) (int64, error) {
	c := v.Shift(2)
	if !c.IsInteger() || c.Abs().GreaterThan(decimal.New(1, 15)) {
		return 0, apperr.Invalid(field, "must be an amount in R$ with at most two decimal places")
	}
	return c.IntPart(), nil
}

// valueBounds are the predicates of the filter's bounds on lifetime
// value, purchases and last purchase.
func valueBounds(f CustomerFilter) ([]predicate.Customer, error) {
	var bounds []predicate.Customer
	for _, b := range []struct {
		field string
		v     *decimal.Decimal
		pred  func(int64) predicate.Customer
	}{{"min_lifetime_value", f.MinLifetimeValue, customer.LifetimeValueCentsGTE}, {"max_lifetime_value", f.MaxLifetimeValue, customer.LifetimeValueCentsLTE}} {
		if b.v == nil {
			continue
		}
		c, err := cents(b.field, *b.v)
		if err != nil {
			return nil, err
		}
		bounds = append(bounds, b.pred(c))
	}
	if f.MinSalesCount != nil {
		bounds = append(bounds, customer.SalesCountGTE(*f.MinSalesCount))
	}
	if f.MaxSalesCount != nil {
		bounds = append(bounds, customer.SalesCountLTE(*f.MaxSalesCount))
	}
	if f.LastPurchaseAfter != nil {
		bounds = append(bounds, customer.LastPurchaseAtGT(f.LastPurchaseAfter.UTC()))
	}
	if f.LastPurchaseBefore != nil {
		bounds = append(bounds, customer.LastPurchaseAtLT(f.LastPurchaseBefore.UTC()))
	}
	return bounds, nil
}

// valueOrder is the filter's order by a value: the keyset predicate after
// a cursor (whose value is the order's name and the last customer's value,
// "sales_count:3") and the order; o is nil for the default order.
func valueOrder(f CustomerFilter, after *ent.Cursor) (o *customerOrder, keyset predicate.Customer, order []customer.OrderOption, err error) {
	badCursor := apperr.Invalid("cursor", "is not a cursor of this list; use next_cursor of the previous page")
	if f.OrderBy == "" {
		if after != nil && after.Value != nil { // a cursor of a list by value, or a tampered one
			return nil, nil, nil, badCursor
		}
		return nil, nil, nil, nil
	}
	by, ok := customerOrders[f.OrderBy]
	if !ok {
		return nil, nil, nil, apperr.Invalid("order_by", "must be lifetime_value, sales_count or last_purchase_at")
	}
	desc := true
	switch f.Direction {
	case "", "desc":
	case "asc":
		desc = false
	default:
		return nil, nil, nil, apperr.Invalid("direction", "must be asc or desc")
	}
	dir := sql.OrderDesc()
	if !desc {
		dir = sql.OrderAsc()
	}
	order = []customer.OrderOption{by.by(dir), customer.ByID(sql.OrderDesc())}
	if after == nil {
		return &by, nil, order, nil
	}
	v, isString := after.Value.(string)
	n, ofOrder := strings.CutPrefix(v, f.OrderBy+":")
	last, perr := strconv.ParseInt(n, 10, 64)
	if !isString || !ofOrder || perr != nil { // a cursor of another order is refused too
		return nil, nil, nil, badCursor
	}
	beyond := by.lt(last)
	if !desc {
		beyond = by.gt(last)
	}
	return &by, customer.Or(beyond, customer.And(by.eq(last), customer.IDLT(after.ID))), order, nil
}

// ListCustomers returns a page of the viewer's customers, newest first, with
// the total over the filtered set. Cursors are keyset positions, stable under
// inserts. Without a filter the total is the tenant's customer count, kept by
// the database (migration 0008), so neither the page nor the total costs more
// at a million customers than at ten thousand.
func (a *Service) ListCustomers(ctx context.Context, f CustomerFilter, after *ent.Cursor, first int) (*ent.CustomerConnection, error) {
	if err := Rules.ListCustomers.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("", f); err != nil {
		return nil, err
	}
	if err := kernel.CheckLimit(first); err != nil {
		return nil, err
	}
	filters, err := valueBounds(f)
	if err != nil {
		return nil, err
	}
	byValue, keyset, order, err := valueOrder(f, after)
	if err != nil {
		return nil, err
	}
	if f.SegmentID != "" {
		filters = append(filters, customer.HasSegmentsWith(segment.ID(f.SegmentID)))
	}
	if f.CreatedAfter != nil {
		filters = append(filters, customer.CreatedAtGT(f.CreatedAfter.UTC()))
	}
	if f.Predictive != "" {
		members, err := a.Scoring.PredictiveMembers(ctx, f.Predictive)
		if err != nil {
			return nil, err
		}
		filters = append(filters, members)
	}
	tenantID, err := kernel.ViewerTenant(ctx)
	if err != nil {
		return nil, err
	}
	search, err := a.searchCustomers(ctx, f.Search, tenantID)
	if err != nil {
		return nil, err
	}
	if search != nil {
		filters = append(filters, search)
	}
	conn := &ent.CustomerConnection{Edges: []*ent.CustomerEdge{}}
	page := func(c *ent.Client) error {
		// Erased customers leave the lists (and the tenant's count).
		q := c.Customer.Query().Where(append(filters, customer.ErasedAtIsNil())...)
		filtered := q.Clone()
		// Ids are time-ordered (ULIDs), so id order is creation order and the
		// keyset predicate is a plain id < cursor on the (tenant_id, id) index;
		// by a value, (value, id) on (tenant_id, column, id).
		switch {
		case byValue != nil:
			if keyset != nil {
				q.Where(keyset)
			}
			q.Order(order...)
		case after != nil:
			q.Where(customer.IDLT(after.ID))
			fallthrough
		default:
			q.Order(ent.Desc(customer.FieldID))
		}
		nodes, err := q.WithSegments(func(q *ent.SegmentQuery) { q.Select(segment.FieldID) }).
			Limit(first + 1).All(ctx)
		if err != nil {
			return err
		}
		conn.PageInfo.HasPreviousPage = after != nil
		if len(nodes) > first {
			conn.PageInfo.HasNextPage = true
			nodes = nodes[:first]
		}
		for _, n := range nodes {
			cursor := ent.Cursor{ID: n.ID}
			if byValue != nil {
				cursor.Value = f.OrderBy + ":" + strconv.FormatInt(byValue.value(n), 10)
			}
			conn.Edges = append(conn.Edges, &ent.CustomerEdge{Node: n, Cursor: cursor})
		}
		conn.TotalCount, err = a.customerTotal(ctx, len(filters) == 0, filtered, conn)
		return err
	}
	if len(filters) == 0 {
		err = page(a.k.DB.Ent)
	} else {
		// How selective a filter is depends on its value (a rare name, a
		// common surname, a small segment): see WithCustomPlans.
		err = a.k.DB.WithCustomPlans(ctx, page)
	}
	if err != nil {
		return nil, err
	}
	if n := len(conn.Edges); n > 0 {
		conn.PageInfo.StartCursor, conn.PageInfo.EndCursor = &conn.Edges[0].Cursor, &conn.Edges[n-1].Cursor
	}
	return conn, nil
}

// customerTotal is the size of the filtered set: the tenant's customer count
// when nothing filters it, the page itself when it is the first and last
// (a selective search needs no second query), a count otherwise.
func (a *Service) customerTotal(ctx context.Context, unfiltered bool, filtered *ent.CustomerQuery, page *ent.CustomerConnection) (int, error) {
	switch {
	case unfiltered:
		t, err := a.k.ViewerTenant(ctx)
		if err != nil {
			return 0, err
		}
		return int(t.CustomerCount), nil
	case !page.PageInfo.HasPreviousPage && !page.PageInfo.HasNextPage:
		return len(page.Edges), nil
	}
	return filtered.Count(ctx)
}
