package rest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// apiResp is an answer of the HTTP interface as the tests read it.
type apiResp struct {
	status int
	header http.Header
	body   []byte
}

// obj decodes the body as one JSON object, numbers as json.Number.
func (r apiResp) obj(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&m), "body: %s", r.body)
	return m
}

// apiBody encodes a request body (nil: none; string: as is; else its
// JSON) and gives its content type, application/json when there is one.
func apiBody(t testing.TB, body any) (raw, contentType string) {
	t.Helper()
	switch b := body.(type) {
	case nil:
		return "", ""
	case string:
		return b, "application/json"
	default:
		j, err := json.Marshal(b)
		require.NoError(t, err)
		return string(j), "application/json"
	}
}

// apiRaw sends a request to srv with a raw body (none when ""), its
// content type and bearer token (none when ""), and the headers given as
// pairs.
func apiRaw(t testing.TB, srv *httptest.Server, method, path, token, contentType, body string, headers ...string) apiResp {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, srv.URL+path, rd)
	require.NoError(t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return apiResp{status: res.StatusCode, header: res.Header, body: b}
}

// apiDo sends body (see apiBody) to srv with token and the headers given
// as pairs.
func apiDo(t testing.TB, srv *httptest.Server, method, path, token string, body any, headers ...string) apiResp {
	t.Helper()
	raw, ct := apiBody(t, body)
	return apiRaw(t, srv, method, path, token, ct, raw, headers...)
}

// sortedKeys are the keys of m in order.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// sortedCopy is s in order.
func sortedCopy(s ...string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// requireV1Error checks an error answer of /v1: status, code, the exact
// keys of the body, its field (a code with a field carries it) and, for
// validation_error, the fields of details. An error is never a replay.
func requireV1Error(t *testing.T, r apiResp, status int, code, field string, details ...string) map[string]any {
	t.Helper()
	require.Equal(t, status, r.status, "%s", r.body)
	require.Equal(t, "application/json", r.header.Get("Content-Type"))
	require.Empty(t, r.header.Values("Idempotent-Replayed"))
	m := r.obj(t)
	require.Equal(t, code, m["error"], "%s", r.body)
	switch {
	case code == "insufficient_scope" || code == "invalid_token":
		require.Equal(t, sortedCopy("error", "error_description"), sortedKeys(m), "%s", r.body)
		require.NotEmpty(t, m["error_description"])
		return m
	case code == "validation_error":
		require.Equal(t, sortedCopy("error", "message", "field", "details"), sortedKeys(m), "%s", r.body)
		var got []string
		for _, d := range m["details"].([]any) {
			dm := d.(map[string]any)
			require.Equal(t, sortedCopy("field", "message"), sortedKeys(dm))
			require.NotEmpty(t, dm["message"])
			got = append(got, dm["field"].(string))
		}
		require.Equal(t, details, got, "%s", r.body)
	case field != "" || code == "duplicate_customer": // which field a race hits varies
		require.Equal(t, sortedCopy("error", "message", "field"), sortedKeys(m), "%s", r.body)
	default:
		require.Equal(t, sortedCopy("error", "message"), sortedKeys(m), "%s", r.body)
	}
	require.NotEmpty(t, m["message"])
	if field != "" {
		require.Equal(t, field, m["field"], "%s", r.body)
	}
	return m
}

// requireUnauthenticated checks the 401s of a bearer route: without a
// token (a challenge without an error code), with a token that does not
// verify, and with another scheme.
func requireUnauthenticated(t *testing.T, srv *httptest.Server, method, path string, body any) {
	t.Helper()
	r := apiDo(t, srv, method, path, "", body)
	m := requireV1Error(t, r, http.StatusUnauthorized, "invalid_token", "")
	require.Equal(t, "a bearer token is required", m["error_description"])
	require.Equal(t, `Bearer realm="fideliza"`, r.header.Get("WWW-Authenticate"))

	r = apiDo(t, srv, method, path, "not.a.jwt", body)
	requireV1Error(t, r, http.StatusUnauthorized, "invalid_token", "")
	require.Contains(t, r.header.Get("WWW-Authenticate"), `error="invalid_token"`)

	req, err := http.NewRequest(method, srv.URL+path, nil)
	require.NoError(t, err)
	req.SetBasicAuth("user", "pass")
	res, err := srv.Client().Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusUnauthorized, res.StatusCode)
	require.Equal(t, `Bearer realm="fideliza"`, res.Header.Get("WWW-Authenticate"))
}

// requireScopeRefused checks that each of tokens, without scope, is
// refused 403 naming it.
func requireScopeRefused(t *testing.T, srv *httptest.Server, method, path string, body any, scope string, tokens ...string) {
	t.Helper()
	for _, tok := range tokens {
		r := apiDo(t, srv, method, path, tok, body)
		m := requireV1Error(t, r, http.StatusForbidden, "insufficient_scope", "")
		require.Equal(t, "the access token lacks the scope "+scope, m["error_description"])
		require.Equal(t, `Bearer realm="fideliza", error="insufficient_scope", scope="`+scope+`"`, r.header.Get("WWW-Authenticate"))
	}
}

// withFields is a copy of m with the pairs of kv set (a nil value deletes
// its key).
func withFields(m map[string]any, kv ...any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		k := kv[i].(string)
		if kv[i+1] == nil {
			delete(out, k)
			continue
		}
		out[k] = kv[i+1]
	}
	return out
}

// cpfCheck appends the two check digits to a 9-digit base.
func cpfCheck(base string) string {
	digit := func(s string) byte {
		sum := 0
		for i := range len(s) {
			sum += int(s[i]-'0') * (len(s) + 1 - i)
		}
		return byte('0' + sum*10%11%10)
	}
	s := base + string(digit(base))
	return s + string(digit(s))
}

// requirePagination checks and reads the pagination object of a page of a
// list: next_cursor a string exactly when there are more.
func requirePagination(t *testing.T, page map[string]any) (nextCursor any, hasMore bool, total int64) {
	t.Helper()
	pg := page["pagination"].(map[string]any)
	require.Equal(t, []string{"has_more", "next_cursor", "total"}, sortedKeys(pg))
	nextCursor, hasMore = pg["next_cursor"], pg["has_more"].(bool)
	total, err := pg["total"].(json.Number).Int64()
	require.NoError(t, err)
	if hasMore {
		require.IsType(t, "", nextCursor)
		require.NotEmpty(t, nextCursor)
	} else {
		require.Nil(t, nextCursor, "next_cursor must be null on the last page")
	}
	return nextCursor, hasMore, total
}
