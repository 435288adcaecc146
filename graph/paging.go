package graph

import (
	"context"
	"strings"

	"github.com/99designs/gqlgen/graphql"

	"github.com/fideliza/fideliza/app/kernel"
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
