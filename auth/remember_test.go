package auth

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/stretchr/testify/require"
)

// countingVerifier accepts the tokens of its map, with their expiry, and
// counts its calls.
type countingVerifier struct {
	expiry map[string]time.Time
	calls  map[string]int
}

func (v *countingVerifier) Verify(_ context.Context, raw string) (*oidc.IDToken, error) {
	v.calls[raw]++
	exp, ok := v.expiry[raw]
	if !ok || !time.Now().Before(exp) {
		return nil, errors.New("refused")
	}
	return &oidc.IDToken{Subject: raw, Expiry: exp}, nil
}

// TestRememberingVerifier: a token accepted is not verified again while it
// is remembered; a token refused, or one past its expiry, is verified at
// every request.
func TestRememberingVerifier(t *testing.T) {
	next := &countingVerifier{calls: map[string]int{}, expiry: map[string]time.Time{
		"long": time.Now().Add(time.Hour), "short": time.Now().Add(50 * time.Millisecond),
	}}
	v := rememberVerified(next)
	for _, tc := range []struct {
		raw       string
		requests  int
		wait      time.Duration
		calls     int
		acceptEnd bool
	}{
		{"long", 5, 0, 1, true},
		{"forged", 3, 0, 3, false},
		{"short", 2, 100 * time.Millisecond, 2, false}, // verified again once expired, and refused
	} {
		for range tc.requests - 1 {
			_, err := v.Verify(t.Context(), tc.raw)
			require.Equal(t, tc.raw != "forged", err == nil, tc.raw)
		}
		time.Sleep(tc.wait) // the remembered verdict's life passes: time is what is tested
		tok, err := v.Verify(t.Context(), tc.raw)
		require.Equal(t, tc.acceptEnd, err == nil, tc.raw)
		if tc.acceptEnd {
			require.Equal(t, tc.raw, tok.Subject)
		}
		require.Equal(t, tc.calls, next.calls[tc.raw], tc.raw)
	}
}
