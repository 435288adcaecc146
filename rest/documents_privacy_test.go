package rest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/auth/authtest"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// rawGraphQL posts body to /graphql as is and returns the status and body.
func rawGraphQL(t testing.TB, e *TestEnv, token, contentType, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.srv.URL+"/graphql", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", contentType)
	return sendGraphQL(t, e, token, req)
}

// sendGraphQL sends req with token and returns the status and body.
func sendGraphQL(t testing.TB, e *TestEnv, token string, req *http.Request) (int, string) {
	t.Helper()
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := e.srv.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(raw)
}

// gqlCodes are the extensions.code of a GraphQL answer's errors.
func gqlCodes(t testing.TB, body string) []string {
	t.Helper()
	var a struct {
		Errors []struct {
			Extensions struct {
				Code string `json:"code"`
			} `json:"extensions"`
		} `json:"errors"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &a), body)
	var codes []string
	for _, e := range a.Errors {
		codes = append(codes, e.Extensions.Code)
	}
	return codes
}

// TestDocumentsNeverLeak (issue 15, item 3; issue 32, item 1): no GraphQL
// surface returns a CPF or CNPJ except masked, nor filters by one; a
// customer is found by a complete document only, one a call; a client's
// malformed request is the client's error and none of its personal data
// reaches the log.
func TestDocumentsNeverLeak(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) { documentsNeverLeak(t, db) })
}

func documentsNeverLeak(t *testing.T, db *storage.DB) {
	idp := authtest.NewProvider(t)
	e := posSetup(t, db, func(s *ServerSetup) {
		require.NoError(t, s.Auth.UseOIDC(context.Background(), auth.OIDCConfig{Issuer: idp.URL, Audience: "fideliza-privacy-test"}))
	})
	cpf, other := posCPF(), posCPF()
	const name, email = "Maria Aparecida Privacidade", "maria.privacidade@example.com"
	cust := e.posCustomer(t, cpf, posCust{name: name, email: email})
	e.posCustomer(t, other, posCust{name: "Outra Pessoa"})
	require.Equal(t, http.StatusAccepted, e.posPost(t, "/sales", posSaleBody(posN("7700"), map[string]any{"id": cpf, "type": "CPF"})).status)
	reader := e.tokenFor(t, "customers:read")
	backoffice := idp.Sign(t, map[string]any{
		"iss": idp.URL, "sub": "analyst@loja.example", "aud": "fideliza-privacy-test",
		"iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix(),
		"tenant_id": e.tenantID, "role": string(viewer.RoleAnalyst),
	})
	post := func(token, query string, vars map[string]any) (int, string) {
		body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
		require.NoError(t, err)
		return rawGraphQL(t, e.TestEnv, token, "application/json", string(body))
	}

	t.Run("introspection shows documents masked and never filtered", func(t *testing.T) {
		_, body := post(reader, `{
			c: __type(name: "Customer") { fields { name } }
			s: __type(name: "Sale") { fields { name } }
			cw: __type(name: "CustomerWhereInput") { inputFields { name } }
			sw: __type(name: "SaleWhereInput") { inputFields { name } }
		}`, nil)
		var a struct {
			Data map[string]struct {
				Fields      []struct{ Name string } `json:"fields"`
				InputFields []struct{ Name string } `json:"inputFields"`
			} `json:"data"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &a), body)
		names := func(key string) []string {
			var ns []string
			for _, f := range append(a.Data[key].Fields, a.Data[key].InputFields...) {
				if strings.Contains(strings.ToLower(f.Name), "document") && !strings.Contains(f.Name, "documentType") &&
					!strings.Contains(f.Name, "DocumentType") {
					ns = append(ns, f.Name)
				}
			}
			return ns
		}
		require.Equal(t, []string{"documentMasked"}, names("c"))
		require.Equal(t, []string{"customerDocumentMasked"}, names("s"))
		require.Empty(t, names("cw"))
		require.Empty(t, names("sw"))
	})

	t.Run("a complete document finds its customer; sales show theirs masked", func(t *testing.T) {
		for _, doc := range []string{cpf, posFormatCPF(cpf)} {
			_, body := post(reader, `query($d: String!) { customerByDocument(document: $d) { id documentMasked } }`,
				map[string]any{"d": doc})
			require.JSONEq(t, `{"data":{"customerByDocument":{"id":"`+cust.ID+`","documentMasked":"***.***.***-`+cpf[9:]+`"}}}`, body)
		}
		_, body := post(backoffice, `{ sales { totalCount edges { node { externalID customerDocumentMasked } } } }`, nil)
		require.JSONEq(t, `{"data":{"sales":{"totalCount":1,"edges":[{"node":{"externalID":"7700","customerDocumentMasked":"***.***.***-`+cpf[9:]+`"}}]}}}`, body)
		require.NotContains(t, body, cpf)
	})

	t.Run("part of a document is refused, never counted", func(t *testing.T) {
		wrongCheck := cpf[:10] + string('0'+(cpf[10]-'0'+1)%10) // the real base, a check digit off
		for _, probe := range []string{cpf[:3], cpf[:10], wrongCheck, "", "%", cpf + "0"} {
			status, body := post(reader, `query($d: String!) { customerByDocument(document: $d) { id } }`, map[string]any{"d": probe})
			require.Equal(t, http.StatusOK, status, body)
			require.Equal(t, []string{"validation_error"}, gqlCodes(t, body), "probe %q: %s", probe, body)
			require.NotContains(t, body, `"id"`, "probe %q", probe)
		}
		for _, predicate := range []string{"document", "documentHasPrefix", "documentContains", "documentGT", "documentIn", "documentEqualFold", "documentIndex"} {
			status, body := post(reader, `{ customers(where: {`+predicate+`: "390"}) { totalCount } }`, nil)
			require.Equal(t, []string{"invalid_query"}, gqlCodes(t, body), "%s: %d %s", predicate, status, body)
		}
	})

	t.Run("client mistakes are the client's errors and their data stays out of the log", func(t *testing.T) {
		writer := e.tokenFor(t, "loyalty:write")
		personal := `"variables":{"cpf":"` + cpf + `","name":"` + name + `","email":"` + email + `"}`
		for _, c := range []struct {
			name, body string
			codes      []string
			token      string
		}{
			{"malformed JSON", `{"query":"{ customers { totalCount } }",` + personal, []string{"invalid_query"}, backoffice},
			{"batched array", `[{"query":"{ customers { totalCount } }",` + personal + `}]`, []string{"invalid_query"}, backoffice},
			{"variables not an object", `{"query":"{ customers { totalCount } }","variables":["` + cpf + `","` + email + `"]}`, []string{"invalid_query"}, backoffice},
			{"bad cursor", `{"query":"query($a: Cursor){ customers(after: $a) { totalCount } }","variables":{"a":"` + cpf + email + `"}}`, []string{"validation_error"}, backoffice},
			{"NaN decimal", `{"query":"mutation($c: ID!){ creditPoints(input: {customerID: $c, orderID: \"` + name + `\", amount: \"NaN\"}) { replayed } }","variables":{"c":"` + cust.ID + `"}}`, []string{"validation_error"}, writer},
			{"bad time", `{"query":"query($f: Time!){ activeCustomers(from: $f, to: \"2026-01-01T00:00:00Z\") }","variables":{"f":"` + email + `"}}`, []string{"validation_error"}, backoffice},
			{"a literal that is no time", `{"query":"{ activeCustomers(from: \"` + name + `\", to: \"2026-01-01T00:00:00Z\") }"}`, []string{"validation_error"}, backoffice},
		} {
			status, body := rawGraphQL(t, e.TestEnv, c.token, "application/json", c.body)
			require.Less(t, status, http.StatusInternalServerError, "%s: %s", c.name, body)
			require.Equal(t, c.codes, gqlCodes(t, body), "%s: %d %s", c.name, status, body)
		}
		log := e.logs.String()
		for _, personal := range []string{cpf, posFormatCPF(cpf), name, email} {
			require.NotContains(t, log, personal, "the log holds personal data of a request")
		}
	})
}
