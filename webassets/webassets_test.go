package webassets

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
)

func TestSet(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"assets/app.js":         {Data: []byte("console.log(1)")},
		"assets/vendor/lib.css": {Data: []byte("body{}")},
	}
	s := Load(fsys, "assets")
	a, err := s.URL("/x/assets", "app.js")
	require.NoError(t, err)
	require.Regexp(t, `^/x/assets/app\.js\?v=[0-9a-f]{16}$`, a)
	_, err = s.URL("/x/assets", "nope.js")
	require.Error(t, err)

	changed := Load(fstest.MapFS{"assets/app.js": {Data: []byte("console.log(2)")}}, "assets")
	b, _ := changed.URL("/x/assets", "app.js")
	require.NotEqual(t, a, b, "new content, new URL")

	for _, tc := range []struct{ name, contentType string }{
		{"app.js", "text/javascript; charset=utf-8"},
		{"vendor/lib.css", "text/css; charset=utf-8"},
	} {
		w := httptest.NewRecorder()
		s.Serve(w, httptest.NewRequest(http.MethodGet, "/", nil), tc.name)
		require.Equal(t, http.StatusOK, w.Code)
		require.Equal(t, tc.contentType, w.Header().Get("Content-Type"))
		require.True(t, strings.Contains(w.Header().Get("Cache-Control"), "immutable"))
	}
	w := httptest.NewRecorder()
	s.Serve(w, httptest.NewRequest(http.MethodGet, "/", nil), "missing.js")
	require.Equal(t, http.StatusNotFound, w.Code)
}
