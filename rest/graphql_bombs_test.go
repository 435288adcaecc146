package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// fragmentChain is n fragments each spreading the next twice: 2^n fields
// once spread, from a document of a few hundred bytes per fragment.
func fragmentChain(n int) string {
	return fragmentChainIn("query{customers(first:1){edges{node{...F0}}}}", "Customer", n)
}

// fragmentChainIn is fragmentChain's n fragments on typ, spread from
// operation (which spreads F0).
func fragmentChainIn(operation, typ string, n int) string {
	var b strings.Builder
	b.WriteString(operation)
	for i := range n {
		if i == n-1 {
			fmt.Fprintf(&b, " fragment F%d on %s{id}", i, typ)
			break
		}
		fmt.Fprintf(&b, " fragment F%d on %s{id ...F%d ...F%d}", i, typ, i+1, i+1)
	}
	return b.String()
}

// repeated selects field n times, unaliased.
func repeated(n int, field string) string {
	return "{customers(first:1){" + strings.Repeat(field+" ", n) + "}}"
}

// TestGraphQLBombsRefusedCheaply (issue 15, item 1): documents whose cost
// grows faster than their size (fragment chains, one field repeated tens of
// thousands of times) are refused with query_too_complex before gqlgen
// validates them, and leave nothing running; a dashboard query passes.
func TestGraphQLBombsRefusedCheaply(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) { refusesBombsCheaply(t, db) })
}

func refusesBombsCheaply(t *testing.T, db *storage.DB) {
	s := newScopeServer(t, db, unlimitedRates)
	token := s.tokenFor(t, "customers:read")
	post := func(query string) (*httptest.ResponseRecorder, time.Duration) {
		body, err := json.Marshal(map[string]string{"query": query})
		require.NoError(t, err)
		req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		began := time.Now()
		s.handler.ServeHTTP(rec, req)
		return rec, time.Since(began)
	}
	// Warm the pools the dashboard query uses, then require that the
	// refusals leave no goroutine behind.
	post(`{ customers(first: 1) { totalCount } }`)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for _, c := range []struct{ name, query string }{
		{"31 fragments each spreading the next twice", fragmentChain(31)},
		{"21 fragments each spreading the next twice", fragmentChain(21)},
		{"totalCount 10,000 times", repeated(10_000, "totalCount")},
		{"totalCount 40,000 times", repeated(40_000, "totalCount")},
	} {
		rec, took := post(c.query)
		t.Logf("%s (%d bytes): %d in %s", c.name, len(c.query), rec.Code, took)
		require.Contains(t, rec.Body.String(), `"query_too_complex"`, "%s: %.300s", c.name, rec.Body.String())
		require.NotContains(t, rec.Body.String(), `"data":{`, c.name)
	}
	rec, _ := post(`{ customers(first: 100) { totalCount edges { node { id name level pointsBalance } } } customersByLevel { level customers } }`)
	require.Equal(t, http.StatusOK, rec.Code, "%s", rec.Body.String())
	require.NotContains(t, rec.Body.String(), `"errors"`)
}

// FuzzGraphQLDocuments fuzzes the document of a GraphQL request through the
// HTTP layer, seeded with the bombs above: never a 5xx, always a JSON body.
//
//	go test -run '^$' -fuzz FuzzGraphQLDocuments -fuzztime 60s ./rest/
func FuzzGraphQLDocuments(f *testing.F) {
	s := newScopeServer(f, storagetest.Open(f, dialect.SQLite), unlimitedRates)
	token := s.tokenFor(f, fuzzScopes)
	for _, seed := range []string{
		fragmentChain(31), fragmentChain(21), fragmentChain(8),
		repeated(10_000, "totalCount"), repeated(40_000, "totalCount"), repeated(3, "totalCount"),
		aliasedFields(30, "customers(first:1){totalCount}"),
		`{ customers(first: 100) { totalCount edges { node { id name level pointsBalance } } } }`,
		`query($n:Int){customers(first:$n){edges{node{...F}}}} fragment F on Customer{...F}`,
		`{__schema{types{name}}}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, query string) {
		body, err := json.Marshal(map[string]string{"query": query})
		if err != nil {
			t.Skip()
		}
		req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		rec, mark := httptest.NewRecorder(), s.logs.Len()
		s.mux.ServeHTTP(rec, req)
		s.requireNothingPersonalLogged(t, mark, body)
		if rec.Code >= http.StatusInternalServerError {
			t.Fatalf("status %d for %q: %.500s", rec.Code, query, rec.Body.String())
		}
		if !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("status %d with a body that is not JSON: %.300q", rec.Code, rec.Body.String())
		}
		if strings.Contains(rec.Body.String(), `"internal_error"`) {
			t.Fatalf("internal error for %q: %.500s", query, rec.Body.String())
		}
	})
}

// aliasedFields repeats field n times under aliases.
func aliasedFields(n int, field string) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		fmt.Fprintf(&b, "a%d:%s ", i, field)
	}
	return b.String() + "}"
}
