// Package scalar maps GraphQL scalars to Go types that gqlgen does not know.
package scalar

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/99designs/gqlgen/graphql"
	"github.com/shopspring/decimal"
)

// MarshalDecimal renders money and rates as a JSON string, so no client parses
// them as a binary float.
func MarshalDecimal(d decimal.Decimal) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		_, _ = io.WriteString(w, strconv.Quote(d.String()))
	})
}

// UnmarshalDecimal accepts a string ("12.50") or a JSON number.
func UnmarshalDecimal(v any) (decimal.Decimal, error) {
	switch v := v.(type) {
	case string:
		return decimal.NewFromString(v)
	case int64:
		return decimal.NewFromInt(v), nil
	case int:
		return decimal.NewFromInt(int64(v)), nil
	case float64:
		return decimal.NewFromFloat(v), nil
	case json.Number:
		return decimal.NewFromString(v.String())
	default:
		return decimal.Zero, fmt.Errorf("decimal: want a string or number, got %T", v)
	}
}
