package rest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/auth/authtest"
	"github.com/fideliza/fideliza/rest"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/viewer"
)

// backOfficeAudience is the aud of the fake provider's tokens.
const backOfficeAudience = "fideliza-backoffice"

// backOffice is a fixture whose server also signs in back-office users of a
// fake external OpenID provider.
type backOffice struct {
	*fixture
	idp *authtest.Provider
}

func newBackOffice(t *testing.T, db *storage.DB, configure ...func(*rest.ServerSetup)) *backOffice {
	t.Helper()
	idp := authtest.NewProvider(t)
	configure = append(configure, func(a *rest.ServerSetup) {
		require.NoError(t, a.Auth.UseOIDC(context.Background(), auth.OIDCConfig{Issuer: idp.URL, Audience: backOfficeAudience}))
	})
	return &backOffice{fixture: newFixture(t, db, configure...), idp: idp}
}

// userToken signs in a back-office user of tenantID with role.
func (b *backOffice) userToken(t testing.TB, tenantID string, role viewer.Role) string {
	t.Helper()
	now := time.Now()
	return b.idp.Sign(t, map[string]any{
		"iss": b.idp.URL, "sub": string(role) + "@loja.example", "aud": backOfficeAudience,
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
		"tenant_id": tenantID, "role": string(role),
	})
}

// gqlError is one error of a GraphQL answer.
type gqlError struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

// gqlAnswer is a GraphQL answer with its raw body.
type gqlAnswer struct {
	Data   json.RawMessage `json:"data"`
	Errors []gqlError      `json:"errors"`
	Raw    []byte          `json:"-"`
}

// codes lists the extensions.code of every error.
func (a gqlAnswer) codes() []string {
	var cs []string
	for _, e := range a.Errors {
		c, _ := e.Extensions["code"].(string)
		cs = append(cs, c)
	}
	return cs
}

// gql posts a query with its variables and decodes the answer; the status
// must be 200, or 422 for a query that does not parse or validate.
func (f *fixture) gql(t testing.TB, token, query string, vars map[string]any) gqlAnswer {
	t.Helper()
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, f.srv.URL+"/graphql", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	var a gqlAnswer
	raw := new(bytes.Buffer)
	_, err = raw.ReadFrom(res.Body)
	require.NoError(t, err)
	a.Raw = raw.Bytes()
	require.Contains(t, []int{http.StatusOK, http.StatusUnprocessableEntity}, res.StatusCode, "%s", a.Raw)
	require.NoError(t, json.Unmarshal(a.Raw, &a), "%s", a.Raw)
	return a
}
