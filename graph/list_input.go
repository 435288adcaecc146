package graph

import (
	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/graph/generated"
)

// givenList is a nullable list argument as an operation takes it: nil when
// absent or null (left as it is), else the list, [] included.
func givenList[T any](l []T) *[]T {
	if l == nil {
		return nil
	}
	return &l
}

// levelShares are the levels' shares given, as UpdateTenant takes them (a
// null share: back to the programme's); nil when none is given.
func levelShares(in []*generated.LevelShareInput) map[customer.Level]*decimal.Decimal {
	if len(in) == 0 {
		return nil
	}
	out := make(map[customer.Level]*decimal.Decimal, len(in))
	for _, ls := range in {
		out[ls.Level] = ls.Share
	}
	return out
}
