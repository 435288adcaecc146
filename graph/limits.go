package graph

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/fideliza/fideliza/app/kernel"
)

// Limits of a GraphQL request. Complexity counts each field once and each
// connection's children once per node of the page asked for, so
// customers(first: 100) with ten fields costs about a thousand.
const (
	maxComplexity = 5000
	maxDepth      = 10
	maxAliases    = 20
	maxBodyBytes  = 1 << 20
	// Where-inputs (the filters of every connection): at most
	// maxWhereList items in any list of one (or, and, the …In
	// predicates) and maxWherePredicates predicates in a request's
	// filters together, so that no request tests hundreds of values.
	maxWhereList       = 50
	maxWherePredicates = 300
)

// Error codes of refused queries, in the REST interfaces' lower-case style.
const (
	codeInvalidQuery   = "invalid_query"
	codeTooComplex     = "query_too_complex"
	codeTooDeep        = "query_too_deep"
	codeTooManyAliases = "too_many_aliases"
	// codeTooManyConnections refuses a subscriptions connection over
	// SubscriptionLimits.PendingPerAddress (HTTP 429 before the upgrade).
	codeTooManyConnections = "too_many_connections"
)

// The codes of a request refused before it runs are request errors: over
// WebSocket the protocol's error message (graphql-transport-ws's error,
// graphql-ws's GQL_ERROR), not a result. gqlgen reads the code once the
// presenter has named it in the lower-case style (requestErrorCode).
func init() {
	for _, code := range []string{codeInvalidQuery, codeTooComplex, codeTooDeep, codeTooManyAliases, codeNotTrusted} {
		errcode.RegisterErrorType(code, errcode.KindProtocol)
	}
}

// pagedComplexity prices a connection by the page it returns: its
// children's complexity times first (or last, or the default page size).
type pagedComplexity struct{ graphql.ExecutableSchema }

func (s pagedComplexity) Complexity(ctx context.Context, typeName, field string, child int, args map[string]any) (int, bool) {
	def := s.Schema().Types[typeName]
	if def == nil {
		return 0, false
	}
	f := def.Fields.ForName(field)
	if f == nil || !strings.HasSuffix(f.Type.Name(), "Connection") {
		return s.ExecutableSchema.Complexity(ctx, typeName, field, child, args)
	}
	n := kernel.DefaultPageSize
	for _, name := range []string{"first", "last"} {
		if v, ok := pageArg(args[name]); ok {
			n = v
		}
	}
	return 1 + child*n, true
}

// pageArg reads first or last as complexity calculation sees it: a literal
// or a variable's JSON number. Values out of range count as the maximum;
// checkField refuses them before any resolver runs.
func pageArg(v any) (int, bool) {
	var n int64
	switch v := v.(type) {
	case int:
		n = int64(v)
	case int64:
		n = v
	case float64:
		n = int64(v)
	case json.Number:
		var err error
		if n, err = v.Int64(); err != nil {
			return kernel.MaxPageSize, true
		}
	default:
		return 0, false
	}
	if n < 1 || n > kernel.MaxPageSize {
		return kernel.MaxPageSize, true
	}
	return int(n), true
}

// shapeLimit refuses operations nested deeper than maxDepth fields, with
// more than maxAliases aliased fields (the cheap way to repeat an expensive
// field many times) or with where-inputs over their bounds, whatever type
// they filter. Introspection is measured apart: the playground's schema
// query is deep by nature and reads no data.
type shapeLimit struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = shapeLimit{}

func (shapeLimit) ExtensionName() string                          { return "ShapeLimit" }
func (shapeLimit) Validate(schema graphql.ExecutableSchema) error { return nil }

func (shapeLimit) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	op := oc.Doc.Operations.ForName(oc.OperationName)
	if op == nil {
		return nil // the executor reports the missing operation
	}
	if op.Operation == ast.Subscription {
		// gqlparser's rule counts root fields by name: one field twice
		// under two aliases passes it, and would fail in the executor.
		if n := len(graphql.CollectFields(oc, op.SelectionSet, []string{"Subscription"})); n != 1 {
			return limitError(errcode.ValidationFailed, "a subscription selects exactly one root field; this one selects %d", n)
		}
	}
	m := measure{fragments: oc.Doc.Fragments, inFragment: map[string]bool{}, vars: oc.Variables}
	m.walk(op.SelectionSet, 0)
	switch {
	case m.depth > maxDepth:
		return limitError(codeTooDeep, "the query nests %d fields deep; the limit is %d", m.depth, maxDepth)
	case m.aliases > maxAliases:
		return limitError(codeTooManyAliases, "the query has %d aliases; the limit is %d", m.aliases, maxAliases)
	case m.longestList > maxWhereList:
		return limitError(codeTooComplex, "a where filter lists %d items; the limit is %d per list", m.longestList, maxWhereList)
	case m.predicates > maxWherePredicates:
		return limitError(codeTooComplex, "the where filters hold %d predicates; the limit is %d per request", m.predicates, maxWherePredicates)
	}
	return nil
}

func limitError(code, format string, args ...any) *gqlerror.Error {
	err := gqlerror.Errorf(format, args...)
	errcode.Set(err, code)
	return err
}

// measure walks an operation's selections through its fragments.
type measure struct {
	fragments      ast.FragmentDefinitionList
	inFragment     map[string]bool // fragments on the current path (validation refuses cycles; this is a guard)
	vars           map[string]any  // the operation's variables, which where-inputs may use
	depth, aliases int
	// The where-inputs: the longest list in one, and their predicates
	// (every field given, and every item of a list of values).
	longestList, predicates int
}

func (m *measure) walk(set ast.SelectionSet, depth int) {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if strings.HasPrefix(s.Name, "__") {
				continue
			}
			if s.Alias != "" && s.Alias != s.Name {
				m.aliases++
			}
			m.depth = max(m.depth, depth+1)
			for _, arg := range s.Arguments {
				if t := arg.Value.ExpectedType; t != nil && strings.HasSuffix(t.Name(), "WhereInput") {
					// A value that does not convert fails the field's
					// arguments before any resolver runs.
					if v, err := arg.Value.Value(m.vars); err == nil {
						m.where(v)
					}
				}
			}
			m.walk(s.SelectionSet, depth+1)
		case *ast.InlineFragment:
			m.walk(s.SelectionSet, depth)
		case *ast.FragmentSpread:
			f := m.fragments.ForName(s.Name)
			if f == nil || m.inFragment[s.Name] {
				continue
			}
			m.inFragment[s.Name] = true
			m.walk(f.SelectionSet, depth)
			m.inFragment[s.Name] = false
		}
	}
}

// where measures the value of a where-input, as written or from a
// variable: an object's fields, a list's items.
func (m *measure) where(v any) {
	switch v := v.(type) {
	case nil:
	case map[string]any:
		for _, f := range v {
			if f != nil {
				m.predicates++
				m.where(f)
			}
		}
	case []any:
		m.longestList = max(m.longestList, len(v))
		for _, item := range v {
			if _, isObject := item.(map[string]any); !isObject && item != nil {
				m.predicates++
			}
			m.where(item)
		}
	}
}
