package scalar

import (
	"time"

	"github.com/99designs/gqlgen/graphql"
)

// MarshalTime renders an instant in RFC 3339 with its offset, as gqlgen's
// Time does.
func MarshalTime(t time.Time) graphql.Marshaler { return graphql.MarshalTime(t) }

// UnmarshalTime reads an instant in RFC 3339 as gqlgen's Time does, in UTC:
// SQLite holds instants as text in UTC, so a filter's bound written with
// another offset would compare as text with another instant.
func UnmarshalTime(v any) (time.Time, error) {
	t, err := graphql.UnmarshalTime(v)
	if err != nil || t.IsZero() {
		return t, err
	}
	return t.UTC(), nil
}
