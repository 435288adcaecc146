package wallet

import (
	"context"
	"errors"

	"entgo.io/ent/dialect"

	"github.com/fideliza/fideliza/ent"
	entgiftcard "github.com/fideliza/fideliza/ent/giftcard"
)

// ErrCardNotFound is a gift card unknown to the viewer.
var ErrCardNotFound = errors.New("gift card not found")

// LockCard reads a gift card and, on PostgreSQL (dbDialect), locks its row
// until the transaction of c ends: the one lock of a card, its moves'
// (domain/giftcard) and its holds'. SQLite's write transactions are serial
// already.
func LockCard(ctx context.Context, c *ent.Client, dbDialect, id string) (*ent.GiftCard, error) {
	q := c.GiftCard.Query().Where(entgiftcard.ID(id))
	if dbDialect == dialect.Postgres {
		q.ForUpdate()
	}
	card, err := q.Only(ctx)
	if ent.IsNotFound(err) {
		return nil, ErrCardNotFound
	}
	return card, err
}
