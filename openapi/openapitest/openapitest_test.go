package openapitest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

type reports []string

func (r *reports) Helper() {}

func (r *reports) Errorf(format string, args ...any) { *r = append(*r, fmt.Sprintf(format, args...)) }

// serve sends method and path to a handler answering status, contentType
// and body, through the middleware, and returns what it reported.
func serve(t *testing.T, method, path string, status int, contentType, body string) reports {
	t.Helper()
	var r reports
	h := Middleware(&r, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	require.Equal(t, status, rec.Code)
	require.Equal(t, body, rec.Body.String(), "the response passes through unchanged")
	return r
}

func TestMiddleware(t *testing.T) {
	t.Run("paths outside the documents are not checked", func(t *testing.T) {
		require.Empty(t, serve(t, http.MethodGet, "/healthz", http.StatusTeapot, "text/plain", "?"))
		require.Empty(t, serve(t, http.MethodPut, "/v1/webhooks/whk_x", http.StatusMethodNotAllowed, "", ""))
	})
	t.Run("a documented answer passes", func(t *testing.T) {
		require.Empty(t, serve(t, http.MethodDelete, "/v1/webhooks/whk_x", http.StatusNoContent, "", ""))
		require.Empty(t, serve(t, http.MethodGet, "/v1/webhooks/whk_x", http.StatusNotFound, "application/json",
			`{"error":"not_found","message":"webhook endpoint not found"}`))
	})
	t.Run("a body where the document has none", func(t *testing.T) {
		r := serve(t, http.MethodDelete, "/v1/webhooks/whk_x", http.StatusNoContent, "application/json", `{"ok":true}`)
		require.Len(t, r, 1)
		require.Contains(t, r[0], "the document gives it no content")
	})
	t.Run("an undocumented status", func(t *testing.T) {
		r := serve(t, http.MethodDelete, "/v1/webhooks/whk_x", http.StatusOK, "", "")
		require.Len(t, r, 1)
		require.Contains(t, r[0], "status is not supported")
	})
	t.Run("an error body of the other interface", func(t *testing.T) {
		r := serve(t, http.MethodGet, "/api/v1/tenants/de000000-0000-4000-8000-000000000001/sales/1",
			http.StatusNotFound, "application/json", `{"error":"not_found","message":"no such sale"}`)
		require.Len(t, r, 1)
		require.True(t, strings.Contains(r[0], "getSaleOutcome") && strings.Contains(r[0], "openapi/pos.yaml"), r[0])
	})
}
