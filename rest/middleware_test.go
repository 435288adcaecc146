package rest

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMiddleware(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		handler     http.HandlerFunc
		header      map[string]string
		wantStatus  int
		wantID      string // "" means a generated id
		wantEcho    bool
		wantLogText string
	}{
		{
			name:       "correlation id is reused and echoed",
			handler:    func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) },
			header:     map[string]string{"X-Correlation-Id": "3f1c2a9e-0000-4000-8000-000000000001"},
			wantStatus: http.StatusNoContent, wantID: "3f1c2a9e-0000-4000-8000-000000000001", wantEcho: true,
		},
		{
			name:       "request id is reused",
			handler:    func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) },
			header:     map[string]string{"X-Request-Id": "abc-123"},
			wantStatus: http.StatusOK, wantID: "abc-123",
		},
		{
			name:       "unprintable id is replaced",
			handler:    func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) },
			header:     map[string]string{"X-Request-Id": "bad id\x01"},
			wantStatus: http.StatusOK,
		},
		{
			name:        "panic becomes a logged 500",
			handler:     func(w http.ResponseWriter, r *http.Request) { panic("boom") },
			wantStatus:  http.StatusInternalServerError,
			wantLogText: `"panic":"boom"`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var logs bytes.Buffer
			log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})) // successes log at DEBUG
			h := correlate(accessLog(log)(recoverer(log, internalV1)(tc.handler)))
			req := httptest.NewRequest(http.MethodGet, "/x", nil)
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)

			require.Equal(t, tc.wantStatus, rec.Code)
			id := rec.Header().Get("X-Request-Id")
			if tc.wantID != "" {
				require.Equal(t, tc.wantID, id)
			} else {
				require.Regexp(t, `^[0-9a-f]{24}$`, id)
			}
			if tc.wantEcho {
				require.Equal(t, tc.wantID, rec.Header().Get("X-Correlation-Id"))
			}
			require.Contains(t, logs.String(), `"request_id":"`+id+`"`, "every log line carries the request id")
			require.Contains(t, logs.String(), tc.wantLogText)
			if tc.wantStatus == http.StatusInternalServerError {
				var body map[string]string
				require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
				require.Equal(t, "internal_error", body["error"])
				require.True(t, strings.Contains(body["message"], id), "the 500 quotes the request id")
			}
		})
	}
}

// TestRecovererAnswersInTheInterfaceFormat: a panic on a POS path is a
// problem, elsewhere the /v1 error body.
func TestRecovererAnswersInTheInterfaceFormat(t *testing.T) {
	t.Parallel()
	boom := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") })
	for _, tc := range []struct {
		answer      func(http.ResponseWriter, *http.Request)
		contentType string
		field       string
	}{
		{internalV1, "application/json", `"error":"internal_error"`},
		{internalProblem, "application/problem+json", `"type":"/problems/internal-error"`},
	} {
		rec := httptest.NewRecorder()
		recoverer(slog.New(slog.DiscardHandler), tc.answer)(boom).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/x", nil))
		require.Equal(t, http.StatusInternalServerError, rec.Code)
		require.Equal(t, tc.contentType, rec.Header().Get("Content-Type"))
		require.Contains(t, rec.Body.String(), tc.field)
	}
}
