package rest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/graph"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

func sha256Hex(doc string) string {
	sum := sha256.Sum256([]byte(doc))
	return hex.EncodeToString(sum[:])
}

// persisted is the extensions entry of an automatic persisted query.
func persisted(doc string) map[string]any {
	return map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": sha256Hex(doc)}}
}

// gqlAnswerOf is a GraphQL answer: its data, and each error's code.
type gqlAnswerOf struct {
	Data   map[string]any `json:"data"`
	Errors []struct {
		Message    string         `json:"message"`
		Extensions map[string]any `json:"extensions"`
	} `json:"errors"`
}

func (a gqlAnswerOf) codes() []any {
	var cs []any
	for _, e := range a.Errors {
		cs = append(cs, e.Extensions["code"])
	}
	return cs
}

// callGraphQL sends params to /graphql with token: POST, or GET with them
// in the query string.
func callGraphQL(t *testing.T, e *TestEnv, token string, get bool, params map[string]any) gqlAnswerOf {
	t.Helper()
	var status int
	var body string
	if get {
		q := url.Values{}
		for k, v := range params {
			raw, err := json.Marshal(v)
			require.NoError(t, err)
			q.Set(k, string(raw))
		}
		req, err := http.NewRequest(http.MethodGet, e.srv.URL+"/graphql?"+q.Encode(), nil)
		require.NoError(t, err)
		status, body = sendGraphQL(t, e, token, req)
	} else {
		raw, err := json.Marshal(params)
		require.NoError(t, err)
		status, body = rawGraphQL(t, e, token, "application/json", string(raw))
	}
	require.Equal(t, http.StatusOK, status, body)
	var a gqlAnswerOf
	require.NoError(t, json.Unmarshal([]byte(body), &a), body)
	return a
}

// requireTypename checks a answers {__typename: Query} (wantCode nil), or
// the one error of code wantCode and no data.
func requireTypename(t *testing.T, a gqlAnswerOf, wantCode any, name string) {
	t.Helper()
	if wantCode == nil {
		require.Empty(t, a.Errors, name)
		require.Equal(t, map[string]any{"__typename": "Query"}, a.Data, name)
		return
	}
	require.Equal(t, []any{wantCode}, a.codes(), name)
	require.Nil(t, a.Data, name)
}

// TestAutomaticPersistedQueries: a hash the server does not know answers
// PersistedQueryNotFound; the document sent with its hash runs and is
// remembered; then the hash alone runs it, by POST or GET; a hash that is
// not the document's is refused.
func TestAutomaticPersistedQueries(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := newTestEnv(t, db)
		tok := e.tokenFor(t, "customers:read")
		const doc = "query Kind { __typename }"
		steps := []struct {
			name      string
			get       bool
			params    map[string]any
			wantCode  any // nil: the data
			wantError string
		}{
			{name: "the hash first: unknown", params: map[string]any{"extensions": persisted(doc)},
				wantCode: "PERSISTED_QUERY_NOT_FOUND", wantError: "PersistedQueryNotFound"},
			{name: "the hash and the document: run and stored", params: map[string]any{"query": doc, "extensions": persisted(doc)}},
			{name: "the hash alone: found", params: map[string]any{"extensions": persisted(doc)}},
			{name: "the hash alone by GET", get: true, params: map[string]any{"extensions": persisted(doc)}},
			{name: "a hash that is not the document's", params: map[string]any{"query": "{ __typename }", "extensions": persisted(doc)},
				wantCode: "invalid_query", wantError: "provided APQ hash does not match query"},
		}
		for _, s := range steps {
			a := callGraphQL(t, e, tok, s.get, s.params)
			requireTypename(t, a, s.wantCode, s.name)
			if s.wantCode != nil {
				require.Equal(t, s.wantError, a.Errors[0].Message, s.name)
			}
		}
	})
}

// TestTrustedDocuments: with a file of trusted documents, those run, sent
// whole or by hash, over HTTP and over /graphql/ws; any other document is
// refused with document_not_trusted.
func TestTrustedDocuments(t *testing.T) {
	t.Parallel()
	const (
		query        = "query Kind { __typename }"
		subscription = "subscription { salesProcessed { id tenantID type subjectID data } }"
		untrusted    = "{ __typename }"
	)
	file := filepath.Join(t.TempDir(), "persisted-documents.json")
	raw, err := json.Marshal(map[string]string{sha256Hex(query): query, sha256Hex(subscription): subscription})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, raw, 0o600))
	docs, err := graph.LoadTrustedDocuments(file)
	require.NoError(t, err)
	require.Equal(t, 2, docs.Len())

	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := newTestEnv(t, db, func(s *ServerSetup) { s.TrustedDocuments = docs })
		tok, err := e.app.Auth.IssueUserToken(viewer.SystemContext(context.Background()), e.tenantID, viewer.RoleAnalyst, "office", time.Hour)
		require.NoError(t, err)

		t.Run("over HTTP", func(t *testing.T) {
			for _, tc := range []struct {
				name     string
				get      bool
				params   map[string]any
				wantCode any // nil: the data
			}{
				{name: "a trusted document by hash", params: map[string]any{"extensions": persisted(query)}},
				{name: "a trusted document by hash, GET", get: true, params: map[string]any{"extensions": persisted(query)}},
				{name: "a trusted document whole", params: map[string]any{"query": query}},
				{name: "a trusted document whole with its hash", params: map[string]any{"query": query, "extensions": persisted(query)}},
				{name: "another document", params: map[string]any{"query": untrusted}, wantCode: "document_not_trusted"},
				{name: "another document with its hash", params: map[string]any{"query": untrusted, "extensions": persisted(untrusted)},
					wantCode: "document_not_trusted"},
				{name: "another document's hash, still unknown", params: map[string]any{"extensions": persisted(untrusted)},
					wantCode: "PERSISTED_QUERY_NOT_FOUND"},
				{name: "introspection is a document like any other", params: map[string]any{"query": "{ __schema { queryType { name } } }"},
					wantCode: "document_not_trusted"},
			} {
				requireTypename(t, callGraphQL(t, e, tok, tc.get, tc.params), tc.wantCode, tc.name)
			}
		})

		t.Run("over /graphql/ws", func(t *testing.T) {
			c := wsDial(t, e.srv.URL, tok).ready()
			c.send(wsMessage{ID: "other", Type: "subscribe", Payload: map[string]any{
				"query": "subscription { customerLevelChanges { id } }",
			}})
			// A request error: the protocol's error message, as a
			// document over the limits gets (TestSubscriptionBombsRefused).
			m := c.nextRaw()
			require.Equal(t, "error", m.Type, "%s", m.Payload)
			require.JSONEq(t, `[{"message": "this server runs only its trusted documents, and this is not one of them (docs/backoffice.md)",
				"extensions": {"code": "document_not_trusted"}}]`, string(m.Payload))
			require.Equal(t, wsMessage{ID: "other", Type: "complete"}, c.next(), "the subscription ends")

			c.send(wsMessage{ID: "s", Type: "subscribe", Payload: map[string]any{"extensions": persisted(subscription)}})
			waitSubscribed(t, e.app, e.tenantID, c, "s")
			recordEvent(t, e.app, e.tenantID, outbox.SaleProcessed, "sal_trusted")
			require.Equal(t, "sal_trusted", c.event("s", "salesProcessed")["subjectID"])
		})
	})
}
