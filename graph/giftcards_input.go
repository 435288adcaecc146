package graph

import (
	"github.com/fideliza/fideliza/app/giftcards"
	"github.com/fideliza/fideliza/graph/generated"
)

// cardMovement renders an operation's gift card move for GraphQL.
func cardMovement(m *giftcards.Moved, err error) (*generated.GiftCardMovement, error) {
	if err != nil {
		return nil, err
	}
	return &generated.GiftCardMovement{GiftCard: m.Card, Entry: m.Entry, Replayed: m.Replayed}, nil
}
