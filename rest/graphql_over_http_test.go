package rest

import (
	"cmp"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"entgo.io/ent/dialect"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/storage/storagetest"
)

// TestGraphQLOverHTTPAudits runs the server audits of the GraphQL-over-HTTP
// specification's audit suite (graphql-http 1.22.4, lib/audits/server.js),
// ported case by case with their ids: every MUST, SHOULD and MAY. Each
// request carries a token; the suite's own requests have none.
func TestGraphQLOverHTTPAudits(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, storagetest.Open(t, dialect.SQLite))
	token := e.tokenFor(t, "customers:read")
	const (
		gqlResp = "application/graphql-response+json"
		appJSON = "application/json"
		typ     = `{ __typename }`
		unknown = `{ 8f31403dfe404bccbb0e835f2629c6a7 }`
	)
	body := func(v map[string]any) string {
		raw, err := json.Marshal(v)
		require.NoError(t, err)
		return string(raw)
	}
	get := func(params map[string]string) string {
		q := url.Values{}
		for k, v := range params {
			q.Set(k, v)
		}
		return q.Encode()
	}
	type audit struct {
		id, name    string
		method      string // POST unless GET
		contentType string // "-": none
		accept      string
		body        string // POST body, or GET query string
		status      int    // 0: any 4xx
		mediaType   string // the answer's Content-Type must contain it
		noErrors    bool   // the answer has no errors entry
		noData      bool   // the answer has no data entry
	}
	audits := []audit{
		{id: "22EB", name: "SHOULD accept application/graphql-response+json and match the content-type", accept: gqlResp, body: body(map[string]any{"query": typ}), status: 200, mediaType: gqlResp},
		{id: "4655", name: "MUST accept application/json and match the content-type", accept: appJSON, body: body(map[string]any{"query": typ}), status: 200, mediaType: appJSON},
		{id: "47DE", name: "SHOULD accept */* and use application/json for the content-type", accept: "*/*", body: body(map[string]any{"query": typ}), status: 200, mediaType: appJSON},
		{id: "80D8", name: "SHOULD assume application/json content-type when accept is missing", body: body(map[string]any{"query": typ}), status: 200, mediaType: appJSON},
		{id: "82A3", name: "MUST use utf-8 encoding when responding", body: body(map[string]any{"query": typ}), status: 200, mediaType: "charset=utf-8"},
		{id: "BF61", name: "MUST accept utf-8 encoded request", contentType: "application/json; charset=utf-8", body: body(map[string]any{"query": `{ __type(name: "Run🏃Swim🏊") { name } }`}), status: 200},
		{id: "78D5", name: "MUST assume utf-8 in request if encoding is unspecified", body: body(map[string]any{"query": typ}), status: 200},
		{id: "2C94", name: "MUST accept POST requests", body: body(map[string]any{"query": typ}), status: 200},
		{id: "5A70", name: "MAY accept application/x-www-form-urlencoded formatted GET requests", method: "GET", body: get(map[string]string{"query": typ}), status: 200},
		{id: "9C48", name: "MAY NOT allow executing mutations on GET requests", method: "GET", accept: gqlResp, body: get(map[string]string{"query": "mutation { __typename }"}), status: 405},
		{id: "9ABE", name: "MAY respond with 4xx status code if content-type is not supplied on POST requests", contentType: "-"},
		{id: "03D4", name: "MUST accept application/json POST requests", body: body(map[string]any{"query": typ}), status: 200},
		{id: "A5BF", name: "MAY use 400 status code when request body is missing on POST", status: 400},
		{id: "423L", name: "MAY use 400 status code on missing {query} parameter", accept: gqlResp, body: body(map[string]any{"notquery": typ}), status: 400, noData: true},
		{id: "34A2", name: "SHOULD allow string {query} parameter when accepting application/graphql-response+json", accept: gqlResp, body: body(map[string]any{"query": typ}), status: 200},
		{id: "13EE", name: "MUST allow string {query} parameter when accepting application/json", accept: appJSON, body: body(map[string]any{"query": typ}), status: 200, noErrors: true},
		{id: "8161", name: "SHOULD allow string {operationName} parameter when accepting application/graphql-response+json", accept: gqlResp, body: body(map[string]any{"operationName": "Query", "query": "query Query { __typename }"}), status: 200},
		{id: "B8B3", name: "MUST allow string {operationName} parameter when accepting application/json", accept: appJSON, body: body(map[string]any{"operationName": "Query", "query": "query Query { __typename }"}), status: 200, noErrors: true},
		{id: "2EA1", name: "SHOULD allow map {variables} parameter when accepting application/graphql-response+json", accept: gqlResp, body: body(map[string]any{"query": "query Type($name: String!) { __type(name: $name) { name } }", "variables": map[string]any{"name": "sometype"}}), status: 200},
		{id: "28B9", name: "MUST allow map {variables} parameter when accepting application/json", accept: appJSON, body: body(map[string]any{"query": "query Type($name: String!) { __type(name: $name) { name } }", "variables": map[string]any{"name": "sometype"}}), status: 200, noErrors: true},
		{id: "D6D5", name: "MAY allow URL-encoded JSON string {variables} parameter in GETs when accepting application/graphql-response+json", method: "GET", accept: gqlResp, body: get(map[string]string{"query": "query Type($name: String!) { __type(name: $name) { name } }", "variables": `{"name":"sometype"}`}), status: 200},
		{id: "6A70", name: "MAY allow URL-encoded JSON string {variables} parameter in GETs when accepting application/json", method: "GET", accept: appJSON, body: get(map[string]string{"query": "query Type($name: String!) { __type(name: $name) { name } }", "variables": `{"name":"sometype"}`}), status: 200, noErrors: true},
		{id: "428F", name: "SHOULD allow map {extensions} parameter when accepting application/graphql-response+json", accept: gqlResp, body: body(map[string]any{"query": typ, "extensions": map[string]any{"some": "value"}}), status: 200},
		{id: "1B7A", name: "MUST allow map {extensions} parameter when accepting application/json", accept: appJSON, body: body(map[string]any{"query": typ, "extensions": map[string]any{"some": "value"}}), status: 200, noErrors: true},
		{id: "B6DC", name: "MAY use 4xx or 5xx status codes on JSON parsing failure", body: `{ "not a JSON`},
		{id: "BCF8", name: "MAY use 400 status code on JSON parsing failure", body: `{ "not a JSON`, status: 400, noData: true},
		{id: "8764", name: "MAY use 4xx or 5xx status codes if parameters are invalid", body: body(map[string]any{"qeury": typ})},
		{id: "3E3A", name: "MAY use 400 status code if parameters are invalid", body: body(map[string]any{"qeury": typ}), status: 400, noData: true},
		{id: "572B", name: "SHOULD use 200 status code on document parsing failure when accepting application/json", accept: appJSON, body: body(map[string]any{"query": "{"}), status: 200, noData: true},
		{id: "FDE2", name: "SHOULD use 200 status code on document validation failure when accepting application/json", accept: appJSON, body: body(map[string]any{"query": unknown}), status: 200, noData: true},
		{id: "7B9B", name: "SHOULD use a status code of 200 on variable coercion failure when accepting application/json", accept: appJSON, body: body(map[string]any{"query": "query CoerceFailure($id: ID!){ __typename }", "variables": map[string]any{"id": nil}}), status: 200, noData: true},
		{id: "865D", name: "SHOULD use 4xx or 5xx status codes on document parsing failure when accepting application/graphql-response+json", accept: gqlResp, body: body(map[string]any{"query": "{"})},
		{id: "556A", name: "SHOULD use 400 status code on document parsing failure when accepting application/graphql-response+json", accept: gqlResp, body: body(map[string]any{"query": "{"}), status: 400},
		{id: "D586", name: "SHOULD not contain the data entry on document parsing failure when accepting application/graphql-response+json", accept: gqlResp, body: body(map[string]any{"query": "{"}), noData: true},
		{id: "51FE", name: "SHOULD use 4xx or 5xx status codes on document validation failure when accepting application/graphql-response+json", accept: gqlResp, body: body(map[string]any{"query": unknown})},
		{id: "74FF", name: "SHOULD use 400 status code on document validation failure when accepting application/graphql-response+json", accept: gqlResp, body: body(map[string]any{"query": unknown}), status: 400},
		{id: "5E5B", name: "SHOULD not contain the data entry on document validation failure when accepting application/graphql-response+json", accept: gqlResp, body: body(map[string]any{"query": unknown}), noData: true},
		{id: "86EE", name: "SHOULD use a status code of 400 on variable coercion failure when accepting application/graphql-response+json", accept: gqlResp, body: body(map[string]any{"query": "query CoerceFailure($id: ID!){ __typename }", "variables": map[string]any{"id": nil}}), status: 400},
	}
	for i, invalid := range []any{map[string]any{"obj": "ect"}, 0, false, []any{"array"}} {
		audits = append(audits,
			audit{id: "LKJ" + string(rune('0'+i)), name: "MAY use 400 status code on an invalid {query} parameter", body: body(map[string]any{"query": invalid}), status: 400, noData: true},
			audit{id: "6C0" + string(rune('0'+i)), name: "MAY use 400 status code on an invalid {operationName} parameter", body: body(map[string]any{"operationName": invalid, "query": typ}), status: 400, noData: true})
	}
	for i, invalid := range []any{"string", 0, false, []any{"array"}} {
		audits = append(audits,
			audit{id: "476" + string(rune('0'+i)), name: "MAY use 400 status code on an invalid {variables} parameter", body: body(map[string]any{"query": typ, "variables": invalid}), status: 400, noData: true},
			audit{id: "58B" + string(rune('0'+i)), name: "MAY use 400 status code on an invalid {extensions} parameter", body: body(map[string]any{"query": typ, "extensions": invalid}), status: 400, noData: true})
	}
	for i, parameter := range []string{"variables", "operationName", "extensions"} {
		audits = append(audits,
			audit{id: "94B" + string(rune('0'+i)), name: "SHOULD allow null {" + parameter + "} parameter when accepting application/graphql-response+json", accept: gqlResp, body: body(map[string]any{"query": typ, parameter: nil}), status: 200, noErrors: true},
			audit{id: "022" + string(rune('0'+i)), name: "MUST allow null {" + parameter + "} parameter when accepting application/json", accept: appJSON, body: body(map[string]any{"query": typ, parameter: nil}), status: 200, noErrors: true})
	}

	for _, a := range audits {
		t.Run(a.id+" "+a.name, func(t *testing.T) {
			target, method := e.srv.URL+"/graphql", http.MethodPost
			var rd io.Reader
			if a.method == http.MethodGet {
				target, method = target+"?"+a.body, http.MethodGet
			} else if a.body != "" {
				rd = strings.NewReader(a.body)
			}
			req, err := http.NewRequest(method, target, rd)
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+token)
			if method == http.MethodPost && a.contentType != "-" {
				req.Header.Set("Content-Type", cmp.Or(a.contentType, appJSON))
			}
			if a.accept != "" {
				req.Header.Set("Accept", a.accept)
			}
			res, err := e.srv.Client().Do(req)
			require.NoError(t, err)
			defer res.Body.Close()
			raw, err := io.ReadAll(res.Body)
			require.NoError(t, err)
			if a.status == 0 {
				require.True(t, res.StatusCode >= 400 && res.StatusCode < 500, "want a 4xx, got %d: %s", res.StatusCode, raw)
			} else {
				require.Equal(t, a.status, res.StatusCode, "%s", raw)
			}
			if a.status == http.StatusMethodNotAllowed {
				require.Equal(t, http.MethodPost, res.Header.Get("Allow"))
			}
			if a.mediaType != "" {
				require.Contains(t, res.Header.Get("Content-Type"), a.mediaType)
			}
			var answer map[string]json.RawMessage
			if a.noErrors || a.noData {
				require.NoError(t, json.Unmarshal(raw, &answer), "%s", raw)
			}
			if a.noErrors {
				require.NotContains(t, answer, "errors", "%s", raw)
			}
			if a.noData {
				require.NotContains(t, answer, "data", "%s", raw)
				require.Contains(t, answer, "errors", "%s", raw)
			}
		})
	}
}
