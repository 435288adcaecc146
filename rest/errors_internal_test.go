package rest

import (
	"encoding/json"
	"errors"
	"html/template"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"entgo.io/ent/dialect"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/httperr"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// TestEveryErrorKindOnEveryRESTInterface walks each kind (and an error of
// no kind) through the /v1 and the point-of-sale error writers: the status
// is the kind's one status; only the body's shape differs.
func TestEveryErrorKindOnEveryRESTInterface(t *testing.T) {
	s := &server{log: slog.New(slog.DiscardHandler)}
	details := []apperr.FieldError{{Field: "name", Message: "is required"}}
	type answer struct {
		status int
		body   map[string]any
		ctype  string
	}
	write := func(writer func(http.ResponseWriter, *http.Request, error), err error) answer {
		rec := httptest.NewRecorder()
		writer(rec, httptest.NewRequest(http.MethodPost, "/x", nil), err)
		var body map[string]any
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body), rec.Body.String())
		return answer{rec.Code, body, rec.Header().Get("Content-Type")}
	}
	cases := append([]apperr.Kind{}, apperr.Kinds...)
	cases = append(cases, 0) // no kind: an internal error
	for _, k := range cases {
		t.Run(k.String(), func(t *testing.T) {
			err := error(&apperr.Error{Kind: k, Code: "some_code", Message: "what went wrong", Field: "name", Details: details})
			want := httperr.Status(k)
			if k == 0 {
				err = errors.New("database on fire")
			}
			v1 := write(s.writeV1Error, err)
			require.Equal(t, want, v1.status, "/v1")
			require.Contains(t, v1.ctype, "application/json")
			require.NotEmpty(t, v1.body["error"], "/v1 bodies name the error")
			pos := write(s.writePOSError, err)
			require.Equal(t, want, pos.status, "POS")
			require.Equal(t, "application/problem+json", pos.ctype)
			require.EqualValues(t, want, pos.body["status"], "the problem repeats the status")
			require.Regexp(t, `^/problems/[a-z-]+$`, pos.body["type"])
			require.NotEmpty(t, problemKinds[pos.body["type"].(string)[len("/problems/"):]].Title, "every problem id has a title")
			switch k {
			case 0:
				require.Equal(t, "internal_error", v1.body["error"])
				require.NotContains(t, v1.body["message"], "fire", "causes stay in the log")
			case apperr.KindForbidden:
				require.Equal(t, "what went wrong", v1.body["error_description"])
			default:
				require.Equal(t, "some_code", v1.body["error"], "the operation's code on /v1")
			}
		})
	}
}

// TestProblemTypePages (issue 21): every problem type URI resolves to a
// short page with the type's title (RFC 9457 §3.1.1); an unknown one is a
// 404 problem.
func TestProblemTypePages(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, storagetest.Open(t, dialect.SQLite))
	for id, kind := range problemKinds {
		res, err := e.srv.Client().Get(e.srv.URL + "/problems/" + id)
		require.NoError(t, err)
		page, err := io.ReadAll(res.Body)
		res.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, res.StatusCode, id)
		require.Equal(t, "text/html; charset=utf-8", res.Header.Get("Content-Type"), id)
		require.Contains(t, string(page), "<h1>"+template.HTMLEscapeString(kind.Title)+"</h1>", id)
		require.NotEmpty(t, kind.About, id)
	}
	res, err := e.srv.Client().Get(e.srv.URL + "/problems/no-such-problem")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusNotFound, res.StatusCode)
	require.Equal(t, "application/problem+json", res.Header.Get("Content-Type"))
}
