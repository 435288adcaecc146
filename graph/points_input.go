package graph

import (
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/graph/generated"
)

// movement renders an operation's points movement for GraphQL.
func movement(m *loyalty.PointsMovement, err error) (*generated.PointsMovement, error) {
	if err != nil {
		return nil, err
	}
	return &generated.PointsMovement{Entry: m.Entry, Replayed: m.Replayed}, nil
}

// int64Ptr widens an optional GraphQL Int.
func int64Ptr(v *int) *int64 {
	if v == nil {
		return nil
	}
	w := int64(*v)
	return &w
}
