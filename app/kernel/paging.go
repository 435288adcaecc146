package kernel

import (
	"context"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/ent"
)

// Page sizes of every list and connection: unbounded pages would let one
// request read a whole table.
const (
	DefaultPageSize = 20
	MaxPageSize     = 100
)

// ValidPageSize says whether n is an allowed page size.
func ValidPageSize(n int) bool { return n >= 1 && n <= MaxPageSize }

// CheckLimit refuses a list's limit outside 1..MaxPageSize.
func CheckLimit(n int) error {
	if !ValidPageSize(n) {
		return apperr.Invalid("limit", "must be between 1 and %d", MaxPageSize)
	}
	return nil
}

// ExportPage is how many rows an export reads at a time: a customer with
// 100,000 ledger entries is written page by page, never held whole.
const ExportPage = 500

// Pages calls each with every row read reads, a page after another, each
// after the last row's id.
func Pages[T any](ctx context.Context, read func(after string) ([]T, error), id func(T) string, each func(T) error) error {
	after := ""
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		rows, err := read(after)
		if err != nil {
			return err
		}
		for _, r := range rows {
			if err := each(r); err != nil {
				return err
			}
		}
		if len(rows) < ExportPage {
			return nil
		}
		after = id(rows[len(rows)-1])
	}
}

// Page is a page of a GraphQL connection as entgql reads it: First items
// after the cursor After, or Last items before Before. The connection
// operations take it with the connection's order and filter, as the
// schema's arguments give them.
type Page struct {
	After  *ent.Cursor
	First  *int
	Before *ent.Cursor
	Last   *int
}
