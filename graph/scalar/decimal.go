// Package scalar maps GraphQL scalars to Go types that gqlgen does not know.
package scalar

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/99designs/gqlgen/graphql"
	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/guard"
)

// MarshalDecimal renders money and rates as a JSON string, so no client parses
// them as a binary float.
func MarshalDecimal(d decimal.Decimal) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		_, _ = io.WriteString(w, strconv.Quote(d.String()))
	})
}

// UnmarshalDecimal accepts a string ("12.50") or a JSON number, within what
// package guard lets an operation take.
func UnmarshalDecimal(v any) (decimal.Decimal, error) {
	var p apperr.Problems
	var d *decimal.Decimal
	switch v := v.(type) {
	case string:
		d = guard.Number(&p, "value", v)
	case json.Number:
		d = guard.Number(&p, "value", v.String())
	case int64:
		d = guard.Number(&p, "value", strconv.FormatInt(v, 10))
	case int:
		d = guard.Number(&p, "value", strconv.Itoa(v))
	case float64:
		f := decimal.NewFromFloat(v)
		if guard.Magnitude(&p, "value", f) {
			d = &f
		}
	default:
		return decimal.Zero, fmt.Errorf("decimal: want a string or number, got %T", v)
	}
	if d == nil {
		return decimal.Zero, fmt.Errorf("decimal: %s", p[0].Message)
	}
	return *d, nil
}
