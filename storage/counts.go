package storage

import (
	"context"

	entgo "entgo.io/ent"
	"entgo.io/ent/dialect"

	"github.com/fideliza/fideliza/ent"
)

// CountBound is how many rows a bounded count counts: a count of up to
// CountBound rows is exact, and a larger one answers CountBound+1 ("more
// than CountBound") after reading CountBound+1 ids, instead of counting
// every row of a table of tens of millions. GraphQL's connections count
// this way (their totalCount, docs/decisions.md); the dashboards' exact
// figures come from the rollups.
const CountBound = 10_000

type boundedCountsKey struct{}

// newClient is the ent client of a database's connections: its counts
// bounded where a context asks (WithBoundedCounts).
func newClient(drv dialect.Driver) *ent.Client {
	c := ent.NewClient(ent.Driver(drv))
	c.Intercept(boundedCounts())
	return c
}

// WithBoundedCounts returns a context whose ent counts are bounded by
// CountBound.
func WithBoundedCounts(ctx context.Context) context.Context {
	return context.WithValue(ctx, boundedCountsKey{}, true)
}

// boundedCounts is the client interceptor that bounds the counts of
// contexts made by WithBoundedCounts; other counts run as they are.
func boundedCounts() ent.Interceptor {
	return entgo.InterceptFunc(func(next entgo.Querier) entgo.Querier {
		return entgo.QuerierFunc(func(ctx context.Context, q entgo.Query) (entgo.Value, error) {
			if qc := entgo.QueryFromContext(ctx); qc == nil || qc.Op != entgo.OpQueryCount || ctx.Value(boundedCountsKey{}) == nil {
				return next.Query(ctx, q)
			}
			// The ids of one more row than the bound: the rows' own query
			// (its filters and ent privacy), stopped early.
			ctx = context.WithValue(ctx, boundedCountsKey{}, nil)
			switch q := q.(type) {
			case *ent.SaleQuery:
				return boundedCount(ctx, q)
			case *ent.SaleItemQuery:
				return boundedCount(ctx, q)
			case *ent.SaleReturnQuery:
				return boundedCount(ctx, q)
			case *ent.PointsEntryQuery:
				return boundedCount(ctx, q)
			case *ent.RedemptionQuery:
				return boundedCount(ctx, q)
			case *ent.CustomerQuery:
				return boundedCount(ctx, q)
			case *ent.EventQuery:
				return boundedCount(ctx, q)
			case *ent.AuditEventQuery:
				return boundedCount(ctx, q)
			case *ent.ConsentChangeQuery:
				return boundedCount(ctx, q)
			case *ent.CouponQuery:
				return boundedCount(ctx, q)
			case *ent.ProductQuery:
				return boundedCount(ctx, q)
			case *ent.WebhookDeliveryQuery:
				return boundedCount(ctx, q)
			}
			return next.Query(ctx, q) // small tables: counted
		})
	})
}

// idsQuery is an ent query of rows with string ids.
type idsQuery[Q any] interface {
	Clone() Q
	Limit(int) Q
	IDs(context.Context) ([]string, error)
}

// boundedCount counts q's rows up to CountBound+1.
func boundedCount[Q idsQuery[Q]](ctx context.Context, q Q) (int, error) {
	ids, err := q.Clone().Limit(CountBound + 1).IDs(ctx)
	return len(ids), err
}
