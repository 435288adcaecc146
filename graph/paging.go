package graph

import (
	"context"
	"strings"

	"entgo.io/contrib/entgql"
	"github.com/99designs/gqlgen/graphql"

	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/storage"

	"github.com/fideliza/fideliza/domain/apperr"
)

// boundPage applies the page rules to every field with a first argument,
// at the root and on nested edges alike: the default page size when neither
// first nor last is given, and sizes only within 1..kernel.MaxPageSize. The
// resolvers read the arguments from fc.Args after it.
func boundPage(fc *graphql.FieldContext) error {
	if _, ok := fc.Args["first"]; !ok {
		return nil
	}
	first, _ := fc.Args["first"].(*int)
	last, _ := fc.Args["last"].(*int)
	if first == nil && last == nil {
		n := kernel.DefaultPageSize
		fc.Args["first"] = &n
		return nil
	}
	for name, n := range map[string]*int{"first": first, "last": last} {
		if n != nil && !kernel.ValidPageSize(*n) {
			return apperr.Invalid(name, "page size must be between 1 and %d, got %d", kernel.MaxPageSize, *n)
		}
	}
	return nil
}

// boundCount bounds the row count of a connection field (its totalCount
// and pageInfo): exact up to storage.CountBound, CountBound+1 beyond
// ("more than"), so a list of a table of tens of millions answers without
// counting it.
func boundCount(ctx context.Context, fc *graphql.FieldContext) context.Context {
	if fc.Field.Definition == nil || !strings.HasSuffix(fc.Field.Definition.Type.Name(), "Connection") {
		return ctx
	}
	return storage.WithBoundedCounts(ctx)
}

// customerCursors restores the value that the cursors of a customers
// connection in another order than by id lost: entgql's cursor omits a
// zero value (a balance or lifetime value of 0, an empty name), and a
// cursor without a value is read as one by id alone, which pages back to
// the start of the order.
func customerCursors(order *ent.CustomerOrder, cursors ...*entgql.Cursor[string]) error {
	if order == nil || order.Field == ent.DefaultCustomerOrder.Field {
		return nil
	}
	for _, c := range cursors {
		if c == nil || c.Value != nil {
			continue
		}
		zero, err := order.Field.Value(&ent.Customer{})
		if err != nil {
			return err
		}
		c.Value = zero
	}
	return nil
}

// page is a connection's pagination arguments as its operation takes them.
func page(after *ent.Cursor, first *int, before *ent.Cursor, last *int) kernel.Page {
	return kernel.Page{After: after, First: first, Before: before, Last: last}
}
