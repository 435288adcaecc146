package audiences

import (
	entsql "entgo.io/ent/dialect/sql"
	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/ent/customer"
)

// lifetimeValue translates a comparison of the lifetime value, rounded
// to the cent and then a double (profileFacts), with x. The rounded value
// is at least a cent amount c when the value is at least c - 0.005 (more
// than that, for c <= 0: rounding goes half away from zero), so every
// comparison becomes one of the stored decimal with such bounds, computed
// here, and none rounds in SQL.
func lifetimeValue(op string, x float64) sqlNode {
	atLeast := func(strict bool) sqlNode { // the rounded value's double is >= x (> x when strict)
		meets := func(c decimal.Decimal) bool {
			if strict {
				return c.InexactFloat64() > x
			}
			return c.InexactFloat64() >= x
		}
		cent := decimal.New(1, -2)
		c := decimal.NewFromFloat(x).Round(2)
		for meets(c.Sub(cent)) {
			c = c.Sub(cent)
		}
		for !meets(c) {
			c = c.Add(cent)
		}
		bound, cmp := c.Sub(decimal.New(5, -3)), " >= "
		if !c.IsPositive() {
			cmp = " > "
		}
		return func(b *entsql.Builder, s *entsql.Selector) {
			col := s.C(customer.FieldLifetimeValue)
			if b.Dialect() == "postgres" {
				b.WriteString("(" + col + cmp).Arg(bound).WriteByte(')')
				return
			}
			// Decimals are text there: compared as doubles, both parsed alike.
			b.WriteString("(CAST(" + col + " AS REAL)" + cmp + "CAST(").Arg(bound.String()).WriteString(" AS REAL))")
		}
	}
	equal := joined(" AND ", atLeast(false), negated(atLeast(true)))
	switch op {
	case "_>=_":
		return atLeast(false)
	case "_>_":
		return atLeast(true)
	case "_<_":
		return negated(atLeast(false))
	case "_<=_":
		return negated(atLeast(true))
	case "_==_":
		return equal
	default: // "_!=_"
		return negated(equal)
	}
}

// joined is parts joined by the operator sep.
func joined(sep string, parts ...sqlNode) sqlNode {
	return func(b *entsql.Builder, s *entsql.Selector) {
		b.WriteByte('(')
		for i, p := range parts {
			if i > 0 {
				b.WriteString(sep)
			}
			p(b, s)
		}
		b.WriteByte(')')
	}
}

// negated is NOT n.
func negated(n sqlNode) sqlNode {
	return func(b *entsql.Builder, s *entsql.Selector) {
		b.WriteString("(NOT ")
		n(b, s)
		b.WriteByte(')')
	}
}
