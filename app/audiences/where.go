package audiences

import (
	"math"
	"slices"
	"strconv"
	"time"

	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/fideliza/fideliza/domain/audience"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/predicate"
)

// A rule the database can evaluate is translated into a WHERE over the
// customer's row, joined to its kept purchases' aggregates (one pass over
// the tenant's rollup_customer_stores) and churn score, and an EXISTS of
// its static segments, so that a preview counts in the database and
// reads only its sample (docs/decisions.md, "Audiences' preview counted in
// the database"). The translation covers a subset of CEL, chosen so that it
// means exactly what Rule.Match does; anything else is not translated, and
// the preview evaluates the rule in Go:
//
//   - a CEL error (a map key a customer lacks) selects no one, and is SQL's
//     NULL: NULL only ever stands for such an error, and WHERE, AND, OR and
//     NOT treat NULL as CEL's &&, || and ! treat an error (false && error is
//     false, true || error is true, !error is an error);
//   - a fact's SQL value is its Go value (profileFacts, salesFacts): "" for
//     an unknown city, -1 days without a purchase, "unknown" and -1 for an
//     unscored customer, 0 for an unknown birth month, the lifetime value
//     rounded to the cent;
//   - numbers compare as numbers whatever their types, as with
//     cel.CrossTypeNumericComparisons.

// sqlNode writes a boolean SQL expression over the customer row of s.
type sqlNode func(b *entsql.Builder, s *entsql.Selector)

// translation translates a rule for a tenant's customers as of now in loc.
type translation struct {
	tenantID string
	now      time.Time
	loc      *time.Location
	groups   map[string][]string // a store group's store ids
	aggs     []aggregate         // the purchase facts the rule reads
	scores   bool                // whether it reads the churn score
	// vars are the variables of the exists and all macros being
	// translated (comprehension.go): each bound to a literal or to the
	// column of a static segment's id.
	vars  map[string]bound
	terms int // how many terms the macros being translated expand into
}

// aggregate is a purchase fact of the customer, a column of the facts
// joined to its row: the sum of purchases or the last purchase's instant,
// in all stores or in a group's.
type aggregate struct {
	last  bool
	group string
}

// The aliases of the tables joined to the customer's row.
const (
	factsAlias  = "audience_facts"
	scoresAlias = "audience_scores"
)

// where is the rule's WHERE as an ent predicate on customers (the query's
// policy still filters the tenant), or false when the rule is outside the
// subset translated.
func (t *translation) where(r *audience.Rule) (predicate.Customer, bool) {
	n, ok := t.expr(r.Expr())
	if !ok {
		return nil, false
	}
	return func(s *entsql.Selector) {
		if t.scores { // a customer's score is its own (unique customer_id), in its tenant
			c := entsql.Table("customer_scores").As(scoresAlias)
			s.LeftJoin(c).OnP(entsql.And(
				entsql.ColumnsEQ(s.C(customer.FieldID), c.C("customer_id")),
				entsql.ColumnsEQ(s.C(customer.FieldTenantID), c.C("tenant_id"))))
		}
		if len(t.aggs) > 0 && s.Dialect() != dialect.Postgres {
			// SQLite: the WHERE is evaluated over the aggregates of the
			// customer's own purchases (one range of the table's key, in
			// its tenant), a query for each customer, which stops at the
			// sample's last.
			s.Where(entsql.P(func(b *entsql.Builder) {
				b.WriteString("(SELECT ")
				n(b, s)
				b.WriteString(" FROM rollup_customer_stores WHERE tenant_id = " + s.C(customer.FieldTenantID) +
					" AND customer_id = " + s.C(customer.FieldID) + " AND purchases > 0)")
			}))
			return
		}
		if len(t.aggs) > 0 {
			// PostgreSQL: joined to the aggregates of every customer's
			// purchases, one pass over the tenant's.
			f := entsql.Select("tenant_id", "customer_id").From(entsql.Table("rollup_customer_stores"))
			for i, a := range t.aggs {
				f.AppendSelectExprAs(entsql.ExprFunc(func(b *entsql.Builder) { t.aggregate(b, a) }), aggName(i))
			}
			// The purchases of the tenant's customers alone, and joined by
			// tenant and customer: the row's tenant is the one its policy
			// let through.
			f.Where(entsql.And(entsql.EQ("tenant_id", t.tenantID), entsql.GT("purchases", 0))).
				GroupBy("tenant_id", "customer_id").As(factsAlias)
			s.LeftJoin(f).OnP(entsql.And(
				entsql.ColumnsEQ(s.C(customer.FieldID), f.C("customer_id")),
				entsql.ColumnsEQ(s.C(customer.FieldTenantID), f.C("tenant_id"))))
		}
		s.Where(entsql.P(func(b *entsql.Builder) { n(b, s) }))
	}, true
}

// aggName is the column of the i-th aggregate.
func aggName(i int) string { return "f" + strconv.Itoa(i) }

// aggregate writes the aggregate a over a customer's purchases by store.
func (t *translation) aggregate(b *entsql.Builder, a aggregate) {
	fn, x := "sum(", "purchases"
	if a.last {
		fn, x = "max(", "last_sold_at"
		if b.Dialect() != dialect.Postgres { // instants are text there: whole seconds (days begin on one)
			x = "CAST(strftime('%s', last_sold_at) AS INTEGER)"
		}
	}
	b.WriteString(fn)
	if a.group != "" {
		b.WriteString("CASE WHEN store_id IN (")
		for i, id := range t.groups[a.group] {
			if i > 0 {
				b.WriteString(", ")
			}
			b.Arg(id)
		}
		b.WriteString(") THEN " + x + " END")
	} else {
		b.WriteString(x)
	}
	b.WriteByte(')')
}

// fact is the SQL value of the purchase fact a, joined to the customer's
// row: NULL when the customer has no purchase (in the group), as for a
// group that has no store.
func (t *translation) fact(a aggregate) sqlNode {
	if a.group != "" && len(t.groups[a.group]) == 0 {
		typ := "BIGINT"
		if a.last {
			typ = "TIMESTAMPTZ"
		}
		return func(b *entsql.Builder, _ *entsql.Selector) {
			if b.Dialect() != dialect.Postgres {
				typ = "INTEGER"
			}
			b.WriteString("CAST(NULL AS " + typ + ")")
		}
	}
	i := slices.Index(t.aggs, a)
	if i < 0 {
		i = len(t.aggs)
		t.aggs = append(t.aggs, a)
	}
	return func(b *entsql.Builder, _ *entsql.Selector) {
		if b.Dialect() == dialect.Postgres {
			b.WriteString(factsAlias + "." + aggName(i))
		} else { // inside the query of the customer's purchases (where)
			t.aggregate(b, a)
		}
	}
}

// The operators of CEL's checked expressions.
const (
	opAnd = "_&&_"
	opOr  = "_||_"
	opNot = "!_"
	opIn  = "@in"
	opIdx = "_[_]"
)

// flipped is each comparison with its operands swapped.
var flipped = map[string]string{
	"_==_": "_==_", "_!=_": "_!=_", "_<_": "_>_", "_<=_": "_>=_", "_>_": "_<_", "_>=_": "_<=_",
}

// sqlOps are the comparisons' SQL operators.
var sqlOps = map[string]string{
	"_==_": " = ", "_!=_": " <> ", "_<_": " < ", "_<=_": " <= ", "_>_": " > ", "_>=_": " >= ",
}

func constant(v bool) sqlNode {
	return func(b *entsql.Builder, _ *entsql.Selector) {
		if v {
			b.WriteString("(1 = 1)")
		} else {
			b.WriteString("(1 = 0)")
		}
	}
}

func (t *translation) expr(e ast.Expr) (sqlNode, bool) {
	switch e.Kind() {
	case ast.LiteralKind:
		v, ok := e.AsLiteral().(types.Bool)
		return constant(bool(v)), ok
	case ast.CallKind:
	case ast.ComprehensionKind:
		return t.comprehension(e.AsComprehension())
	default:
		return nil, false
	}
	call := e.AsCall()
	args := call.Args()
	if call.IsMemberFunction() {
		return t.stringTest(call)
	}
	switch fn := call.FunctionName(); fn {
	case opAnd, opOr:
		parts := make([]sqlNode, len(args))
		for i, a := range args {
			var ok bool
			if parts[i], ok = t.expr(a); !ok {
				return nil, false
			}
		}
		return joined(map[string]string{opAnd: " AND ", opOr: " OR "}[fn], parts...), true
	case opNot:
		inner, ok := t.expr(args[0])
		return negated(inner), ok
	case opIn:
		return t.in(args[0], args[1])
	default:
		if _, ok := sqlOps[fn]; ok && len(args) == 2 {
			return t.compare(fn, args[0], args[1])
		}
	}
	return nil, false
}

// fact is a fact a comparison reads: its name, and the key of a map's.
type fact struct{ name, key string }

// factOf is the fact e reads, if e is a name or a map's lookup by a
// literal key (or a macro's variable bound to one).
func (t *translation) factOf(e ast.Expr) (fact, bool) {
	if t.inSegments() {
		return fact{}, false // no fact inside the query of the segments
	}
	if e.Kind() == ast.IdentKind {
		return fact{name: e.AsIdent()}, !t.isVar(e)
	}
	if e.Kind() != ast.CallKind {
		return fact{}, false
	}
	c := e.AsCall()
	if c.FunctionName() != opIdx || c.IsMemberFunction() || c.Args()[0].Kind() != ast.IdentKind || t.isVar(c.Args()[0]) {
		return fact{}, false
	}
	k := t.literal(c.Args()[1])
	if k.Kind() != ast.LiteralKind {
		return fact{}, false
	}
	key, ok := k.AsLiteral().(types.String)
	return fact{name: c.Args()[0].AsIdent(), key: string(key)}, ok
}

// compare translates a comparison of a fact with a literal, in either
// order.
func (t *translation) compare(op string, l, r ast.Expr) (sqlNode, bool) {
	l, r = t.literal(l), t.literal(r)
	if l.Kind() == ast.LiteralKind {
		l, r, op = r, l, flipped[op]
	}
	if n, ok := t.compareStrings(op, l, r); ok {
		return n, true
	}
	f, ok := t.factOf(l)
	if !ok || r.Kind() != ast.LiteralKind {
		return nil, false
	}
	lit := r.AsLiteral()
	switch f.name {
	case "level", "city", "state", "churn_risk":
		v, ok := lit.(types.String)
		if f.key != "" || !ok || op != "_==_" && op != "_!=_" {
			return nil, false // strings ordered by bytes: not SQL's collations
		}
		return t.binary(t.stringOf(f.name), op, string(v)), true
	case "points", "birthday_month", "purchases", "group_purchases":
		op, n, ok := integral(op, lit)
		if !ok || (f.key != "") != (f.name == "group_purchases") {
			return nil, false
		}
		return t.binary(t.intOf(f), op, n), true
	case "days_since_last_purchase", "group_days_since_last_purchase":
		op, n, ok := integral(op, lit)
		if !ok || (f.key != "") != (f.name == "group_days_since_last_purchase") || n > maxDays || n < -maxDays {
			return nil, false
		}
		return t.days(f, op, n), true
	case "probability_alive":
		x, ok := double(lit)
		if !ok || f.key != "" {
			return nil, false
		}
		p := t.score("p_alive")
		return t.binary(func(b *entsql.Builder, s *entsql.Selector) {
			b.WriteString("COALESCE(")
			p(b, s)
			b.WriteString(", -1)")
		}, op, x), true
	case "lifetime_value":
		x, ok := double(lit)
		if !ok || f.key != "" || math.Abs(x) > maxValue {
			return nil, false
		}
		return lifetimeValue(op, x), true
	}
	return nil, false
}

// maxValue bounds the lifetime values a comparison's literal may name,
// well below where a double stops telling cents apart.
const maxValue = 1e12

// maxDays bounds the days a comparison's literal may count (about 2,700
// years), so that the instants they begin exist.
const maxDays = 1_000_000

// binary is the comparison of x with the parameter v.
func (t *translation) binary(x sqlNode, op string, v any) sqlNode {
	return func(b *entsql.Builder, s *entsql.Selector) {
		b.WriteByte('(')
		x(b, s)
		b.WriteString(sqlOps[op]).Arg(v).WriteByte(')')
	}
}

// integral turns the comparison of an integer fact with a number into one
// with an integer: x >= 2.5 is x >= 3. An equality with a fraction, or a
// number past what a double holds exactly, is not translated.
func integral(op string, lit any) (string, int64, bool) {
	switch v := lit.(type) {
	case types.Int:
		return op, int64(v), true
	case types.Uint:
		return op, int64(v), v <= math.MaxInt64
	case types.Double:
		x := float64(v)
		if math.Abs(x) > 1<<53 || math.IsNaN(x) {
			return "", 0, false
		}
		switch {
		case x == math.Trunc(x):
			return op, int64(x), true
		case op == "_>=_" || op == "_<_":
			return op, int64(math.Ceil(x)), true
		case op == "_>_" || op == "_<=_":
			return op, int64(math.Floor(x)), true
		}
	}
	return "", 0, false
}

// double is a literal number as the double CEL compares a double fact
// with; an integer past 2^53 is not translated.
func double(lit any) (float64, bool) {
	switch v := lit.(type) {
	case types.Double:
		return float64(v), !math.IsNaN(float64(v))
	case types.Int:
		return float64(v), v <= 1<<53 && v >= -1<<53
	case types.Uint:
		return float64(v), v <= 1<<53
	}
	return 0, false
}

// stringOf is a string fact's SQL value.
func (t *translation) stringOf(name string) sqlNode {
	var risk sqlNode
	if name == "churn_risk" {
		risk = t.score("risk")
	}
	return func(b *entsql.Builder, s *entsql.Selector) {
		switch name {
		case "level":
			b.WriteString(s.C(customer.FieldLevel))
		case "city":
			b.WriteString("COALESCE(" + s.C(customer.FieldAddressCity) + ", '')")
		case "state":
			b.WriteString("COALESCE(" + s.C(customer.FieldAddressState) + ", '')")
		case "churn_risk":
			b.WriteString("COALESCE(")
			risk(b, s)
			b.WriteString(", 'unknown')")
		}
	}
}

// intOf is an integer fact's SQL value: NULL for a store group's the
// customer has no purchase in (a missing key).
func (t *translation) intOf(f fact) sqlNode {
	switch f.name {
	case "purchases":
		p := t.fact(aggregate{})
		return func(b *entsql.Builder, s *entsql.Selector) {
			b.WriteString("COALESCE(")
			p(b, s)
			b.WriteString(", 0)")
		}
	case "group_purchases":
		return t.fact(aggregate{group: f.key})
	}
	return func(b *entsql.Builder, s *entsql.Selector) {
		if f.name == "points" {
			b.WriteString(s.C(customer.FieldPointsBalance))
		} else { // birthday_month; birth dates are YYYY-MM-DD (the schema's pattern)
			b.WriteString("COALESCE(CAST(substr(" + s.C(customer.FieldBirthDate) + ", 6, 2) AS BIGINT), 0)")
		}
	}
}

// score is the customer's churn score's column, NULL when unscored.
func (t *translation) score(column string) sqlNode {
	t.scores = true
	return func(b *entsql.Builder, _ *entsql.Selector) { b.WriteString(scoresAlias + "." + column) }
}

// days translates a comparison of days since the last purchase (overall,
// or in a store group) with n into one of the instant of the last purchase
// with the instants local days begin: the days are today's local day less
// the last purchase's, so days <= n is a purchase since the day n days ago
// began. Without any purchase the overall days are -1; in a group, a
// missing key (NULL).
func (t *translation) days(f fact, op string, n int64) sqlNode {
	// since(k) is when the local day k days before today began.
	y, m, d := t.now.In(t.loc).Date()
	since := func(k int64) time.Time { return time.Date(y, m, d-int(k), 0, 0, 0, 0, t.loc) }
	var from, to *time.Time // the last purchase in [from, to)
	// n is made the bound of <= and >= (x < n is x <= n-1), which the
	// comparison for no purchase (-1 days) below reads.
	switch op {
	case "_<=_", "_<_":
		if op == "_<_" {
			n--
		}
		at := since(n)
		from = &at
	case "_>=_", "_>_":
		if op == "_>_" {
			n++
		}
		at := since(n - 1)
		to = &at
	case "_==_", "_!=_":
		a, z := since(n), since(n-1)
		from, to = &a, &z
	}
	last := t.fact(aggregate{last: true, group: f.key})
	return func(b *entsql.Builder, s *entsql.Selector) {
		if f.key == "" {
			b.WriteString("COALESCE(")
		}
		if op == "_!=_" {
			b.WriteString("NOT ")
		}
		b.WriteByte('(')
		last(b, s)
		arg := func(at time.Time) any {
			if b.Dialect() == dialect.Postgres {
				return at
			}
			return at.Unix() // whole seconds there (aggregate)
		}
		switch {
		case from != nil && to != nil: // one value of the last purchase
			last := to.Add(-time.Microsecond) // PostgreSQL's resolution
			if b.Dialect() != dialect.Postgres {
				last = to.Add(-time.Second)
			}
			b.WriteString(" BETWEEN ").Arg(arg(*from)).WriteString(" AND ").Arg(arg(last))
		case from != nil:
			b.WriteString(" >= ").Arg(arg(*from))
		default:
			b.WriteString(" < ").Arg(arg(*to))
		}
		b.WriteByte(')')
		if f.key == "" { // no purchase: -1 days
			c := map[string]bool{"_<=_": -1 <= n, "_<_": -1 <= n, "_>=_": -1 >= n, "_>_": -1 >= n, "_==_": n == -1, "_!=_": n != -1}[op]
			b.WriteString(", ")
			constant(c)(b, s)
			b.WriteByte(')')
		}
	}
}

// in translates a membership: of a literal in a list or map fact, or of
// a fact in a list literal.
func (t *translation) in(x, list ast.Expr) (sqlNode, bool) {
	x = t.literal(x)
	if x.Kind() == ast.LiteralKind && list.Kind() == ast.IdentKind && !t.isVar(list) && !t.inSegments() {
		v, ok := x.AsLiteral().(types.String)
		if !ok {
			return nil, false
		}
		return t.member(list.AsIdent(), string(v))
	}
	if list.Kind() != ast.ListKind || len(list.AsList().Elements()) == 0 || len(list.AsList().OptionalIndices()) > 0 {
		return nil, false
	}
	elems := list.AsList().Elements()
	parts := make([]sqlNode, len(elems))
	for i, e := range elems {
		var ok bool
		if parts[i], ok = t.compare("_==_", x, e); !ok {
			return nil, false
		}
	}
	return joined(" OR ", parts...), true
}

// consentColumns are the columns of the consents a rule names.
var consentColumns = map[string]string{
	"email": customer.FieldConsentMarketingEmail, "sms": customer.FieldConsentMarketingSms,
	"whatsapp": customer.FieldConsentMarketingWhatsapp, "data_sharing": customer.FieldConsentDataSharing,
}

// member translates v in the list or map fact name.
func (t *translation) member(name, v string) (sqlNode, bool) {
	switch name {
	case "consents":
		col, ok := consentColumns[v]
		if !ok {
			return constant(false), true
		}
		return func(b *entsql.Builder, s *entsql.Selector) {
			b.WriteString("(" + s.C(col) + " = ").Arg(true).WriteByte(')')
		}, true
	case "segments": // static segments only, as profileFacts reads them
		return segmentsWhere(func(b *entsql.Builder, _ *entsql.Selector) {
			b.WriteString("(" + segmentColumn + " = ").Arg(v).WriteByte(')')
		}), true
	case "group_purchases", "group_days_since_last_purchase":
		if len(t.groups[v]) == 0 {
			return constant(false), true
		}
		p := t.fact(aggregate{group: v})
		return func(b *entsql.Builder, s *entsql.Selector) {
			b.WriteByte('(')
			p(b, s)
			b.WriteString(" IS NOT NULL)")
		}, true
	}
	return nil, false
}
