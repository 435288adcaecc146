// Package audience is the language of audiences: a rule over a customer's
// facts, written in CEL (cel.dev/cel-go), checked against the facts' types
// when it is saved and evaluated against facts read in bulk.
//
// The facts a rule may name (Facts, Declarations):
//
//	level                                 string  bronze, silver, gold or diamond
//	points                                int     points balance
//	lifetime_value                        double  reais, to the cent (see below)
//	purchases                             int     processed sales
//	days_since_last_purchase              int     whole days; -1 when none
//	group_purchases                       map(string, int)  processed sales per store group
//	group_days_since_last_purchase        map(string, int)  per store group; no key when none
//	store_most_visited                    string  code of the store with most sales; "" when none
//	birthday_month                        int     1–12; 0 when the birth date is unknown
//	city, state                           string  of the postal address; "" when unknown
//	consents                              list(string)  of email, sms, whatsapp, data_sharing
//	churn_risk                            string  low, medium, high or unknown
//	probability_alive                     double  0–1; -1 when unscored
//	segments                              list(string)  ids of the static segments the customer is in
//
// Money is decimal everywhere else; CEL has no decimal, and a rule only
// compares the lifetime value with a threshold, so it is a double of reais
// rounded to the cent, and numbers of different types compare as numbers
// (lifetime_value >= 500 is a rule, not a type error).
package audience

import (
	"fmt"
	"slices"
	"strings"

	"cel.dev/cel-go/cel"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/interpreter"

	"github.com/fideliza/fideliza/domain/apperr"
)

// MaxLength bounds a rule's source, in bytes.
const MaxLength = 4000

// CostLimit bounds one evaluation's work (CEL's cost units): a rule that
// loops over its facts' lists far longer than any customer's is refused.
const CostLimit = 100_000

// Facts are what a rule reads of one customer.
type Facts struct {
	Level                      string
	Points                     int64
	LifetimeValue              float64
	Purchases                  int64
	DaysSinceLastPurchase      int64
	GroupPurchases             map[string]int64
	GroupDaysSinceLastPurchase map[string]int64
	StoreMostVisited           string
	BirthdayMonth              int64
	City, State                string
	Consents                   []string
	ChurnRisk                  string
	ProbabilityAlive           float64
	Segments                   []string
}

// Declarations are the names a rule may use, and their types.
var Declarations = []struct {
	Name string
	Type *cel.Type
}{
	{"level", cel.StringType},
	{"points", cel.IntType},
	{"lifetime_value", cel.DoubleType},
	{"purchases", cel.IntType},
	{"days_since_last_purchase", cel.IntType},
	{"group_purchases", cel.MapType(cel.StringType, cel.IntType)},
	{"group_days_since_last_purchase", cel.MapType(cel.StringType, cel.IntType)},
	{"store_most_visited", cel.StringType},
	{"birthday_month", cel.IntType},
	{"city", cel.StringType},
	{"state", cel.StringType},
	{"consents", cel.ListType(cel.StringType)},
	{"churn_risk", cel.StringType},
	{"probability_alive", cel.DoubleType},
	{"segments", cel.ListType(cel.StringType)},
}

func declared(name string) bool {
	return slices.ContainsFunc(Declarations, func(d struct {
		Name string
		Type *cel.Type
	}) bool {
		return d.Name == name
	})
}

// resolve is the value of a declared name in f.
func (f *Facts) resolve(name string) (any, bool) {
	switch name {
	case "level":
		return f.Level, true
	case "points":
		return f.Points, true
	case "lifetime_value":
		return f.LifetimeValue, true
	case "purchases":
		return f.Purchases, true
	case "days_since_last_purchase":
		return f.DaysSinceLastPurchase, true
	case "group_purchases":
		return orEmpty(f.GroupPurchases), true
	case "group_days_since_last_purchase":
		return orEmpty(f.GroupDaysSinceLastPurchase), true
	case "store_most_visited":
		return f.StoreMostVisited, true
	case "birthday_month":
		return f.BirthdayMonth, true
	case "city":
		return f.City, true
	case "state":
		return f.State, true
	case "consents":
		return orNone(f.Consents), true
	case "churn_risk":
		return f.ChurnRisk, true
	case "probability_alive":
		return f.ProbabilityAlive, true
	case "segments":
		return orNone(f.Segments), true
	}
	return nil, false
}

func orEmpty(m map[string]int64) map[string]int64 {
	if m == nil {
		return map[string]int64{}
	}
	return m
}

func orNone(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

// activation lets the interpreter read Facts without building a map per
// customer.
type activation struct{ f *Facts }

func (a activation) ResolveName(name string) (any, bool) { return a.f.resolve(name) }
func (activation) Parent() interpreter.Activation        { return nil }

var env = func() *cel.Env {
	opts := []cel.EnvOption{
		cel.CrossTypeNumericComparisons(true),
		cel.ParserExpressionSizeLimit(MaxLength),
		cel.ParserRecursionLimit(64),
	}
	for _, d := range Declarations {
		opts = append(opts, cel.Variable(d.Name, d.Type))
	}
	e, err := cel.NewEnv(opts...)
	if err != nil {
		panic(err)
	}
	return e
}()

// Rule is a checked rule, ready to evaluate; safe for concurrent use.
type Rule struct {
	Source string
	prg    cel.Program
	names  []string
	expr   celast.Expr
}

// Expr is the rule's checked expression, for a translation of the rule
// into another language (a database's WHERE) that must mean what Match
// does.
func (r *Rule) Expr() celast.Expr { return r.expr }

// Names are the facts the rule reads, so that evaluating it reads no
// other.
func (r *Rule) Names() []string { return r.names }

// Compile parses and checks src against the facts' types. Its error is an
// *apperr.Error of kind invalid on the field "rule", each problem naming
// its position as line:column (from 1).
func Compile(src string) (*Rule, error) {
	var p apperr.Problems
	switch {
	case strings.TrimSpace(src) == "":
		p.Add("rule", "must not be empty")
		return nil, p.Err()
	case len(src) > MaxLength:
		p.Add("rule", "must be at most %d bytes", MaxLength)
		return nil, p.Err()
	}
	ast, iss := env.Compile(src)
	if iss.Err() != nil {
		for _, e := range iss.Errors() {
			p.Add("rule", "%d:%d: %s", e.Location.Line(), e.Location.Column()+1, e.Message)
		}
		return nil, p.Err()
	}
	if !ast.OutputType().IsExactType(types.BoolType) {
		p.Add("rule", "1:1: must be a bool, is %s", ast.OutputType())
		return nil, p.Err()
	}
	prg, err := env.Program(ast, cel.CostLimit(CostLimit), cel.EvalOptions(cel.OptOptimize))
	if err != nil {
		p.Add("rule", "1:1: %s", err)
		return nil, p.Err()
	}
	r := &Rule{Source: src, prg: prg, expr: ast.NativeRep().Expr()}
	for _, ref := range ast.NativeRep().ReferenceMap() {
		if declared(ref.Name) && !slices.Contains(r.names, ref.Name) { // not a comprehension's variable
			r.names = append(r.names, ref.Name)
		}
	}
	slices.Sort(r.names)
	return r, nil
}

// Match tells whether the customer of f is in the audience. A rule that
// fails on f (a map key it lacks, a division by zero, its cost limit) does
// not match, and says why.
func (r *Rule) Match(f *Facts) (bool, error) {
	in, _, err := r.MatchCost(f)
	return in, err
}

// MatchCost is Match with the evaluation's cost in CEL's units (at most
// about the cost limit of one evaluation, CostLimit), so that a caller can
// bound the work of evaluating the rule over many customers.
func (r *Rule) MatchCost(f *Facts) (bool, uint64, error) {
	out, det, err := r.prg.Eval(activation{f})
	cost := uint64(CostLimit)
	if det != nil && det.ActualCost() != nil {
		cost = *det.ActualCost()
	}
	if err != nil {
		return false, cost, err
	}
	b, ok := out.Value().(bool)
	if !ok {
		return false, cost, fmt.Errorf("audience: the rule gave %v, not a bool", out.Value())
	}
	return b, cost, nil
}
