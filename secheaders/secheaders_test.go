package secheaders

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPolicy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		policy Policy
		want   http.Header
	}{
		{
			name:   "defaults",
			policy: Policy{CSP: "default-src 'none'"},
			want: http.Header{
				"Content-Security-Policy": {"default-src 'none'"},
				"X-Content-Type-Options":  {"nosniff"},
				"Referrer-Policy":         {"no-referrer"},
				"X-Page":                  {"1"},
			},
		},
		{
			name:   "framing denied, own referrer",
			policy: Policy{CSP: "default-src 'self'", Referrer: "same-origin", DenyFraming: true},
			want: http.Header{
				"Content-Security-Policy": {"default-src 'self'"},
				"X-Content-Type-Options":  {"nosniff"},
				"X-Frame-Options":         {"DENY"},
				"Referrer-Policy":         {"same-origin"},
				"X-Page":                  {"1"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			page := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Header().Set("X-Page", "1") })
			rec := httptest.NewRecorder()
			tt.policy.Middleware(page).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
			require.Equal(t, tt.want, rec.Header())
		})
	}
}
