package playground_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/playground"
)

// TestLoginLink: the SSO link appears only with a login URL, escaped, and a
// script URL is neutralised by html/template.
func TestLoginLink(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ loginURL, want string }{
		{"https://sso.example.com/authorize?client_id=fz&state=a b", `<a class="sso" href="https://sso.example.com/authorize?client_id=fz&amp;state=a%20b">Sign in with SSO</a>`},
		{"javascript:alert(1)", `<a class="sso" href="#ZgotmplZ">Sign in with SSO</a>`},
	} {
		r := chi.NewRouter()
		r.Mount("/playground", playground.Handler(playground.Config{GraphQLPath: "/graphql", LoginURL: tc.loginURL}))
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/playground", nil))
		require.Equal(t, http.StatusOK, rec.Code)
		body := rec.Body.String()
		require.Contains(t, body, tc.want)
		require.Contains(t, body, `data-endpoint="/graphql"`)
	}
}
