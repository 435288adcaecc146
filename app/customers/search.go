package customers

import (
	"context"
	"strings"
	"unicode"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"

	"github.com/fideliza/fideliza/domain/document"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/predicate"
	"github.com/fideliza/fideliza/ent/schema/fold"
)

// searchCustomers matches a term against the tenant's customers: a valid
// CPF (formatted or not) is a document lookup (counted and audited); a term
// with "@" is an e-mail, matched whole (any case); any other term matches
// names by word prefix: each word of the folded term begins some word of the
// folded name ("silv" finds "Silva", "ouza" does not find "Souza"). The
// external id is matched exactly whatever the term.
func (a *Service) searchCustomers(ctx context.Context, term, tenantID string) (predicate.Customer, error) {
	term = strings.TrimSpace(term)
	if term == "" {
		return nil, nil
	}
	byExternalID := customer.ExternalID(term)
	if cpf, err := document.ParseCPF(term); err == nil {
		id, err := a.lookUpDocument(ctx, cpf)
		if err != nil {
			return nil, err
		}
		return customer.Or(customer.ID(id), byExternalID), nil // no id is "": none found matches none
	}
	byTerm := equal(tenantID, customer.FieldEmailKey, strings.ToLower(term))
	if !strings.Contains(term, "@") {
		byTerm = namePrefixes(nameWords(term))
	}
	return anyOf(byTerm, equal(tenantID, customer.FieldExternalID, term)), nil
}

// nameWords splits a term as the name index splits names: folded, into runs
// of letters and digits.
func nameWords(term string) []string {
	return strings.FieldsFunc(fold.Text(term), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
}

// match is one way a term finds customers: a predicate over the customers
// and, for SQLite, a query of the rowids it finds.
type match struct {
	where  predicate.Customer
	rowids string
	args   []any
}

// equal matches a column of the tenant's customers exactly (through its
// tenant index).
func equal(tenantID, column, value string) match {
	return match{
		where:  func(s *sql.Selector) { s.Where(sql.EQ(s.C(column), value)) },
		rowids: "SELECT rowid FROM customers WHERE tenant_id = ? AND " + column + " = ?",
		args:   []any{tenantID, value},
	}
}

// namePrefixes matches the names of which each word begins some word.
// PostgreSQL looks every word up in the GIN index of the names' word
// prefixes, SQLite in the FTS5 word index with its prefix indexes (both of
// migration 0043). No words (a term of punctuation) match no name.
func namePrefixes(words []string) match {
	if len(words) == 0 {
		return match{where: func(s *sql.Selector) { s.Where(sql.False()) }, rowids: "SELECT rowid FROM customers WHERE false"}
	}
	phrases, args := make([]string, len(words)), make([]any, len(words))
	for i, w := range words {
		phrases[i], args[i] = `"`+w+`"*`, w // a word has no quote to escape
	}
	return match{
		where: func(s *sql.Selector) {
			s.Where(sql.P(func(b *sql.Builder) {
				b.WriteString("fideliza_word_prefixes(" + s.C(customer.FieldNameSearch) + ") @> ARRAY[").Args(args...).WriteString("]::text[]")
			}))
		},
		rowids: "SELECT rowid FROM customer_search WHERE customer_search MATCH ?",
		args:   []any{strings.Join(phrases, " AND ")},
	}
}

// anyOf matches the customers any of ms finds. On SQLite it is one rowid
// list, so that SQLite looks up the rows found instead of walking the
// tenant's index newest first and testing each.
func anyOf(ms ...match) predicate.Customer {
	return func(s *sql.Selector) {
		if s.Dialect() != dialect.SQLite {
			wheres := make([]predicate.Customer, len(ms))
			for i, m := range ms {
				wheres[i] = m.where
			}
			customer.Or(wheres...)(s)
			return
		}
		var queries []string
		var args []any
		for _, m := range ms {
			queries, args = append(queries, m.rowids), append(args, m.args...)
		}
		s.Where(sql.ExprP(s.C("rowid")+" IN ("+strings.Join(queries, " UNION ALL ")+")", args...))
	}
}
