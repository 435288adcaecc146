package audiences

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/fideliza/fideliza/ent/customer"
)

// The exists and all macros translate over the lists and maps whose
// elements the database knows (docs/decisions.md, "Audiences' preview
// budget"):
//
//   - over consents (four values) and the keys of group_purchases and
//     group_days_since_last_purchase (the tenant's store groups), as an OR
//     (exists) or AND (all) over the values, each "the customer has it"
//     with the predicate for it: the variable is that value, a literal;
//   - over segments, as an EXISTS over the customer's static segments (all:
//     a NOT EXISTS of one the predicate refuses) whose predicate reads the
//     variable alone (==, !=, in a list, startsWith), the segment's id.
//
// SQL's OR and AND treat NULL (a CEL error) as exists and all treat an
// error: exists is true when a predicate is, else an error when one is;
// all false when one is false, else an error when one is.

// bound is what a macro's variable stands for while its predicate is
// translated: a string literal, or (lit nil) the id of a segment of the
// query over segments.
type bound struct{ lit ast.Expr }

// segmentColumn is the segment's id in the query over a customer's static
// segments.
const segmentColumn = "m.segment_id"

// maxTerms bounds the terms the expansion of nested macros writes.
const maxTerms = 256

var literals = ast.NewExprFactory()

// isVar tells whether e is a macro's variable being translated.
func (t *translation) isVar(e ast.Expr) bool {
	if e.Kind() != ast.IdentKind {
		return false
	}
	_, ok := t.vars[e.AsIdent()]
	return ok
}

// inSegments tells whether the predicate being translated is of the query
// over segments, which reads no fact.
func (t *translation) inSegments() bool {
	for _, b := range t.vars {
		if b.lit == nil {
			return true
		}
	}
	return false
}

// literal is e, or the literal its variable stands for.
func (t *translation) literal(e ast.Expr) ast.Expr {
	if t.isVar(e) {
		if b := t.vars[e.AsIdent()]; b.lit != nil {
			return b.lit
		}
	}
	return e
}

// with translates e with the variable name bound to b.
func (t *translation) with(name string, b bound, e ast.Expr) (sqlNode, bool) {
	if t.vars == nil {
		t.vars = map[string]bound{}
	}
	prev, had := t.vars[name]
	t.vars[name] = b
	defer func() {
		if had {
			t.vars[name] = prev
		} else {
			delete(t.vars, name)
		}
	}()
	return t.expr(e)
}

// quantifier is whether c is the expansion of exists (all false) or all,
// and its predicate.
func quantifier(c ast.ComprehensionExpr) (all bool, pred ast.Expr, ok bool) {
	if c.HasIterVar2() || c.AccuInit().Kind() != ast.LiteralKind || c.LoopStep().Kind() != ast.CallKind ||
		c.Result().Kind() != ast.IdentKind || c.Result().AsIdent() != c.AccuVar() {
		return false, nil, false
	}
	init, ok := c.AccuInit().AsLiteral().(types.Bool)
	step := c.LoopStep().AsCall()
	op := map[bool]string{false: opOr, true: opAnd}[bool(init)]
	if !ok || step.FunctionName() != op || len(step.Args()) != 2 ||
		step.Args()[0].Kind() != ast.IdentKind || step.Args()[0].AsIdent() != c.AccuVar() {
		return false, nil, false
	}
	return bool(init), step.Args()[1], true
}

// comprehension translates exists and all over a fact's list or map.
func (t *translation) comprehension(c ast.ComprehensionExpr) (sqlNode, bool) {
	all, pred, ok := quantifier(c)
	if !ok || t.inSegments() || c.IterRange().Kind() != ast.IdentKind || t.isVar(c.IterRange()) {
		return nil, false
	}
	name := c.IterRange().AsIdent()
	var values []string
	switch name {
	case "segments":
		p, ok := t.with(c.IterVar(), bound{}, pred)
		if !ok {
			return nil, false
		}
		if all {
			return negated(segmentsWhere(negated(p))), true
		}
		return segmentsWhere(p), true
	case "consents":
		values = slices.Sorted(maps.Keys(consentColumns))
	case "group_purchases", "group_days_since_last_purchase":
		values = slices.Sorted(maps.Keys(t.groups))
	default:
		return nil, false
	}
	if t.terms == 0 {
		t.terms = 1
	}
	if t.terms*max(len(values), 1) > maxTerms {
		return nil, false
	}
	t.terms *= max(len(values), 1)
	defer func() { t.terms /= max(len(values), 1) }()
	terms := make([]sqlNode, len(values))
	for i, v := range values {
		p, ok := t.with(c.IterVar(), bound{lit: literals.NewLiteral(0, types.String(v))}, pred)
		if !ok {
			return nil, false
		}
		has, _ := t.member(name, v)
		if all {
			terms[i] = joined(" OR ", negated(has), p)
		} else {
			terms[i] = joined(" AND ", has, p)
		}
	}
	switch {
	case len(terms) == 0:
		return constant(all), true
	case all:
		return joined(" AND ", terms...), true
	}
	return joined(" OR ", terms...), true
}

// segmentsWhere is whether one of the customer's static segments meets
// cond (over segmentColumn), as profileFacts reads them.
func segmentsWhere(cond sqlNode) sqlNode {
	return func(b *entsql.Builder, s *entsql.Selector) {
		b.WriteString("EXISTS (SELECT 1 FROM customer_segments m JOIN segments g ON g.id = m.segment_id WHERE m.customer_id = " +
			s.C(customer.FieldID) + " AND g.tenant_id = " + s.C(customer.FieldTenantID) + " AND g.rule IS NULL AND ")
		cond(b, s)
		b.WriteByte(')')
	}
}

// compareStrings translates an equality of two string literals (a
// variable bound to one), or of a segment's id with a literal.
func (t *translation) compareStrings(op string, l, r ast.Expr) (sqlNode, bool) {
	rv, ok := r.AsLiteral().(types.String)
	if r.Kind() != ast.LiteralKind || !ok || op != "_==_" && op != "_!=_" {
		return nil, false
	}
	if l.Kind() == ast.LiteralKind {
		lv, ok := l.AsLiteral().(types.String)
		return constant((lv == rv) == (op == "_==_")), ok
	}
	if !t.isVar(l) { // a segment's id: literals were substituted
		return nil, false
	}
	return t.binary(func(b *entsql.Builder, _ *entsql.Selector) { b.WriteString(segmentColumn) }, op, string(rv)), true
}

// stringTest translates startsWith, endsWith and contains of a literal (a
// variable bound to one) with a literal, and startsWith of a segment's id.
func (t *translation) stringTest(call ast.CallExpr) (sqlNode, bool) {
	if len(call.Args()) != 1 {
		return nil, false
	}
	target, arg := t.literal(call.Target()), t.literal(call.Args()[0])
	a, ok := arg.AsLiteral().(types.String)
	if arg.Kind() != ast.LiteralKind || !ok {
		return nil, false
	}
	if target.Kind() == ast.LiteralKind {
		v, ok := target.AsLiteral().(types.String)
		test := map[string]func(string, string) bool{
			"startsWith": strings.HasPrefix, "endsWith": strings.HasSuffix, "contains": strings.Contains,
		}[call.FunctionName()]
		if !ok || test == nil {
			return nil, false
		}
		return constant(test(string(v), string(a))), true
	}
	if !t.isVar(target) || call.FunctionName() != "startsWith" {
		return nil, false
	}
	// substr counts characters on both databases, as startsWith's prefix
	// is of code points.
	n := utf8.RuneCountInString(string(a))
	return func(b *entsql.Builder, _ *entsql.Selector) {
		b.WriteString("(substr(" + segmentColumn + ", 1, " + strconv.Itoa(n) + ") = ").Arg(string(a)).WriteByte(')')
	}, true
}
