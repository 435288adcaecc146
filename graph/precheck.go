package graph

import (
	"context"
	"errors"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
)

// Bounds a document must keep before it is validated: gqlparser's
// validation does work that grows faster than the document (overlapping
// fields compares selections pairwise; fragments are walked where spread),
// so an oversized document is refused first, at a cost linear in its size.
const (
	maxTokens           = 15000 // lexer tokens of the document
	maxWrittenFields    = 1000  // field selections written in the document
	maxExpandedFields   = 10000 // field selections once every fragment is spread
	maxFragmentExpanded = 1 << 40
)

// documentBounds refuses a document over the bounds before gqlgen parses
// and validates it, whatever brought it: a POST or a GET, a subscription
// over WebSocket, a persisted or trusted document found by its hash (it
// runs after the extensions that find those).
type documentBounds struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
} = documentBounds{}

func (documentBounds) ExtensionName() string                   { return "DocumentBounds" }
func (documentBounds) Validate(graphql.ExecutableSchema) error { return nil }

func (documentBounds) MutateOperationParameters(_ context.Context, p *graphql.RawParams) *gqlerror.Error {
	return precheck(p.Query)
}

// precheck measures a document and refuses one over the bounds; a
// document that does not parse is left for gqlgen to report.
func precheck(query string) *gqlerror.Error {
	if query == "" {
		return nil
	}
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, maxTokens)
	if err != nil {
		if gerr := (*gqlerror.Error)(nil); errors.As(err, &gerr) && strings.HasPrefix(gerr.Message, "exceeded token limit") {
			return limitError(codeTooComplex, "the document has more than %d tokens", maxTokens)
		}
		return nil
	}
	s := sizer{fragments: doc.Fragments, memo: map[string]int64{}}
	var expanded int64
	for _, op := range doc.Operations {
		expanded += s.size(op.SelectionSet)
	}
	for _, f := range doc.Fragments {
		s.written += countWritten(f.SelectionSet)
	}
	for _, op := range doc.Operations {
		s.written += countWritten(op.SelectionSet)
	}
	switch {
	case s.written > maxWrittenFields:
		return limitError(codeTooComplex, "the document selects %d fields; the limit is %d", s.written, maxWrittenFields)
	case expanded > maxExpandedFields:
		return limitError(codeTooComplex, "the document selects over %d fields once its fragments are spread", maxExpandedFields)
	}
	return nil
}

// sizer counts the fields of selection sets with every fragment spread,
// each fragment's size computed once: linear in the document however the
// fragments nest.
type sizer struct {
	fragments ast.FragmentDefinitionList
	memo      map[string]int64 // fragment sizes; -1 while one is being sized (a cycle)
	written   int
}

func (s *sizer) size(set ast.SelectionSet) int64 {
	var n int64
	for _, sel := range set {
		switch v := sel.(type) {
		case *ast.Field:
			n += 1 + s.size(v.SelectionSet)
		case *ast.InlineFragment:
			n += s.size(v.SelectionSet)
		case *ast.FragmentSpread:
			n += s.fragment(v.Name)
		}
		n = min(n, maxFragmentExpanded) // saturate: doubling chains overflow
	}
	return n
}

func (s *sizer) fragment(name string) int64 {
	if n, ok := s.memo[name]; ok {
		return max(n, 0) // a cycle counts nothing; validation refuses it
	}
	f := s.fragments.ForName(name)
	if f == nil {
		return 0
	}
	s.memo[name] = -1
	n := s.size(f.SelectionSet)
	s.memo[name] = n
	return n
}

// countWritten counts the field selections written in set.
func countWritten(set ast.SelectionSet) int {
	n := 0
	for _, sel := range set {
		switch v := sel.(type) {
		case *ast.Field:
			n += 1 + countWritten(v.SelectionSet)
		case *ast.InlineFragment:
			n += countWritten(v.SelectionSet)
		}
	}
	return n
}
