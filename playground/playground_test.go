package playground_test

import (
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

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

// TestExamples: the page carries every example as its tab (the title as a
// comment above the query) with its period, and each example's request is
// one line of JSON a shell can paste between single quotes, with $from and
// $to exactly when it covers a period.
func TestExamples(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	playground.Handler(playground.Config{GraphQLPath: "/graphql"}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	attr := regexp.MustCompile(`data-examples="([^"]*)"`).FindStringSubmatch(rec.Body.String())
	require.NotNil(t, attr, "the page carries the examples")
	var tabs []struct {
		Query string
		Days  int
	}
	require.NoError(t, json.Unmarshal([]byte(html.UnescapeString(attr[1])), &tabs))
	require.Len(t, tabs, len(playground.Examples))

	now := time.Date(2026, 12, 7, 13, 9, 17, 500, time.UTC)
	for i, e := range playground.Examples {
		require.Equal(t, "# "+e.Title+"\n"+e.Query+"\n", tabs[i].Query)
		require.Equal(t, e.Days, tabs[i].Days)
		require.Regexp(t, `^query [A-Z]\w+`, e.Query, "a named operation: GraphiQL runs the tab's")

		body := string(e.Request(now))
		require.NotContains(t, body, "\n")
		require.NotContains(t, body, "'", "pasted between single quotes")
		var req struct {
			Query     string
			Variables map[string]string
		}
		require.NoError(t, json.Unmarshal([]byte(body), &req))
		require.Equal(t, strings.Join(strings.Fields(e.Query), " "), req.Query)
		if e.Days == 0 {
			require.Nil(t, req.Variables, e.Title)
			require.NotContains(t, e.Query, "$from")
			continue
		}
		require.Contains(t, e.Query, "$from: Time!, $to: Time!")
		require.Equal(t, map[string]string{"from": now.AddDate(0, 0, -e.Days).Truncate(time.Second).Format(time.RFC3339),
			"to": "2026-12-07T13:09:17Z"}, req.Variables, e.Title)
	}
	require.Positive(t, playground.Examples[0].Days, "the playground opens on a dashboard")
}
