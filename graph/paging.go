package graph

import (
	"github.com/99designs/gqlgen/graphql"

	"github.com/fideliza/fideliza/graph/apperr"
)

// Page sizes of every connection: unbounded pages would let one query read a
// whole table.
const (
	defaultPageSize = 20
	maxPageSize     = 100
)

// boundPage applies the page rules to every field with a first argument,
// at the root and on nested edges alike: the default page size when neither
// first nor last is given, and sizes only within 1..maxPageSize. The
// resolvers read the arguments from fc.Args after it.
func boundPage(fc *graphql.FieldContext) error {
	if _, ok := fc.Args["first"]; !ok {
		return nil
	}
	first, _ := fc.Args["first"].(*int)
	last, _ := fc.Args["last"].(*int)
	if first == nil && last == nil {
		n := defaultPageSize
		fc.Args["first"] = &n
		return nil
	}
	for name, n := range map[string]*int{"first": first, "last": last} {
		if n != nil && !validLimit(*n) {
			return apperr.Invalid(name, "page size must be between 1 and %d, got %d", maxPageSize, *n)
		}
	}
	return nil
}

// validLimit says whether n is an allowed page size.
func validLimit(n int) bool { return n >= 1 && n <= maxPageSize }

// checkLimit refuses a REST list's limit outside 1..maxPageSize.
func checkLimit(n int) error {
	if !validLimit(n) {
		return apperr.Invalid("limit", "must be between 1 and %d", maxPageSize)
	}
	return nil
}
