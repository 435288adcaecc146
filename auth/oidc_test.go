package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/auth/authtest"
	"github.com/fideliza/fideliza/viewer"
)

const (
	testTenant   = "0b6f1c52-6d3e-4a53-9f0e-6f4c9a1d2e10"
	testAudience = "fideliza-backoffice"
)

func TestUseOIDCRefusesBadProviders(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closedURL := "http://" + l.Addr().String()
	require.NoError(t, l.Close())

	cases := []struct {
		name    string
		setup   func(p *authtest.Provider) OIDCConfig // p is a fresh provider
		wantErr string
	}{
		{"unreachable", func(p *authtest.Provider) OIDCConfig {
			return OIDCConfig{Issuer: closedURL, Audience: testAudience}
		}, "connection refused"},
		{"no discovery document", func(p *authtest.Provider) OIDCConfig {
			return OIDCConfig{Issuer: p.URL + "/nothing-here", Audience: testAudience}
		}, "404"},
		{"discovery names another issuer", func(p *authtest.Provider) OIDCConfig {
			p.SetDiscovery("issuer", "https://idp.example.com")
			return OIDCConfig{Issuer: p.URL, Audience: testAudience}
		}, "did not match"},
		{"trailing slash is another issuer", func(p *authtest.Provider) OIDCConfig {
			return OIDCConfig{Issuer: p.URL + "/", Audience: testAudience}
		}, "did not match"},
		{"only symmetric or unsigned algorithms", func(p *authtest.Provider) OIDCConfig {
			p.SetDiscovery("id_token_signing_alg_values_supported", []string{"HS256", "none"})
			return OIDCConfig{Issuer: p.URL, Audience: testAudience}
		}, "Fideliza accepts [RS256 ES256]"},
		{"no algorithms advertised", func(p *authtest.Provider) OIDCConfig {
			p.SetDiscovery("id_token_signing_alg_values_supported", nil)
			return OIDCConfig{Issuer: p.URL, Audience: testAudience}
		}, "Fideliza accepts"},
		{"no jwks_uri", func(p *authtest.Provider) OIDCConfig {
			p.SetDiscovery("jwks_uri", "")
			return OIDCConfig{Issuer: p.URL, Audience: testAudience}
		}, "no jwks_uri"},
		{"plain http off the loopback", func(p *authtest.Provider) OIDCConfig {
			return OIDCConfig{Issuer: "http://idp.example.com", Audience: testAudience}
		}, "must use https"},
		{"not a URL", func(p *authtest.Provider) OIDCConfig {
			return OIDCConfig{Issuer: "idp.example.com", Audience: testAudience}
		}, "not an absolute URL"},
		{"no audience", func(p *authtest.Provider) OIDCConfig {
			return OIDCConfig{Issuer: p.URL}
		}, "audience is required"},
		{"our own issuer", func(p *authtest.Provider) OIDCConfig {
			return OIDCConfig{Issuer: "http://127.0.0.1:8080/", Audience: testAudience}
		}, "own issuer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := NewService(nil, "http://127.0.0.1:8080", "fideliza")
			err := s.UseOIDC(context.Background(), tc.setup(authtest.NewProvider(t)))
			require.ErrorContains(t, err, tc.wantErr)
			require.Nil(t, s.external)
		})
	}
}

func TestUseOIDCTimesOut(t *testing.T) {
	t.Parallel()
	// A listener that accepts and never answers.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	conns := make(chan net.Conn, 16)
	t.Cleanup(func() {
		l.Close()
		close(conns)
		for c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			select {
			case conns <- c:
			default:
				c.Close()
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	s := NewService(nil, "http://127.0.0.1:8080", "fideliza")
	start := time.Now()
	err = s.UseOIDC(ctx, OIDCConfig{Issuer: "http://" + l.Addr().String(), Audience: testAudience})
	require.Error(t, err)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, time.Since(start), 5*time.Second)
}

// TestExternalClaims maps the claims of an external provider's tokens to
// viewers; it needs no database, since external tokens never touch our keys.
func TestExternalClaims(t *testing.T) {
	t.Parallel()
	idp := authtest.NewProvider(t)
	idp.SetDiscovery("id_token_signing_alg_values_supported", []string{"RS256", "ES256", "HS256"})
	s := NewService(nil, "http://127.0.0.1:8080", "fideliza")
	require.NoError(t, s.UseOIDC(context.Background(), OIDCConfig{
		Issuer: idp.URL, Audience: testAudience, TenantClaim: "org", RoleClaim: "roles",
	}))
	require.Equal(t, []string{"RS256", "ES256"}, s.external.algs,
		"HS256 is advertised but never accepted")

	now := time.Now()
	base := func() map[string]any {
		return map[string]any{
			"iss": idp.URL, "sub": "user-42", "aud": []string{testAudience, "other-app"},
			"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
			"org": testTenant, "roles": []string{"viewer", "analyst"},
		}
	}
	with := func(k string, v any) map[string]any {
		c := base()
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
		return c
	}
	otherKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)

	cases := []struct {
		name     string
		token    string
		wantRole viewer.Role
		wantErr  string
	}{
		{"analyst in a role list", idp.Sign(t, base()), viewer.RoleAnalyst, ""},
		{"admin wins over analyst", idp.Sign(t, with("roles", []string{"analyst", "admin"})), viewer.RoleAdmin, ""},
		{"role as a string", idp.Sign(t, with("roles", "admin")), viewer.RoleAdmin, ""},
		{"access token typ", authtest.Sign(t, jose.RS256, idp.Key, map[string]any{"kid": idp.KeyID, "typ": "at+jwt"}, base()), viewer.RoleAnalyst, ""},
		{"no typ", authtest.Sign(t, jose.RS256, idp.Key, map[string]any{"kid": idp.KeyID}, base()), viewer.RoleAnalyst, ""},
		{"logout token typ", authtest.Sign(t, jose.RS256, idp.Key, map[string]any{"kid": idp.KeyID, "typ": "logout+jwt"}, base()), "", "token type"},
		{"unknown role", idp.Sign(t, with("roles", []string{"viewer"})), "", "grants no access"},
		{"role of another type", idp.Sign(t, with("roles", 7)), "", "not a string"},
		{"no role", idp.Sign(t, with("roles", nil)), "", "roles claim: missing"},
		{"no tenant", idp.Sign(t, with("org", nil)), "", "no org claim"},
		{"tenant not a UUID", idp.Sign(t, with("org", "acme")), "", "not a tenant id"},
		{"tenant UUID not canonical", idp.Sign(t, with("org", "0B6F1C52-6D3E-4A53-9F0E-6F4C9A1D2E10")), "", "not a tenant id"},
		{"no sub", idp.Sign(t, with("sub", nil)), "", "no sub"},
		{"wrong audience", idp.Sign(t, with("aud", "other-app")), "", "expected audience"},
		{"expired", idp.Sign(t, with("exp", now.Add(-time.Minute).Unix())), "", "expired"},
		{"not valid for ten minutes", idp.Sign(t, with("nbf", now.Add(10*time.Minute).Unix())), "", "nbf"},
		{"not valid for three minutes (past our leeway, within go-oidc's)", idp.Sign(t, with("nbf", now.Add(3*time.Minute).Unix())), "", "not valid yet"},
		{"valid in thirty seconds (within the leeway)", idp.Sign(t, with("nbf", now.Add(30*time.Second).Unix())), viewer.RoleAnalyst, ""},
		{"ES256 by a key not in the provider's set", authtest.Sign(t, jose.ES256, otherKey, map[string]any{"kid": idp.KeyID, "typ": "JWT"}, base()), "", "signature"},
		{"HS256 with the provider's kid", authtest.Sign(t, jose.HS256, []byte("0123456789abcdef0123456789abcdef"), map[string]any{"kid": idp.KeyID}, base()), "", "malformed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v, err := s.Authenticate(context.Background(), tc.token)
			if tc.wantErr != "" {
				require.ErrorIs(t, err, ErrInvalidToken)
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.wantRole, v.Role)
			require.Equal(t, testTenant, v.TenantID)
			require.Equal(t, "user-42", v.Subject)
			require.Equal(t, RoleScopes(tc.wantRole), v.Scopes)
		})
	}
}

func TestRoleScopes(t *testing.T) {
	t.Parallel()
	require.Equal(t, Scopes, RoleScopes(viewer.RoleAdmin))
	require.Equal(t, []string{"customers:read", "campaigns:read", "loyalty:read", "webhooks:read"}, RoleScopes(viewer.RoleAnalyst))
	require.Empty(t, RoleScopes(viewer.RoleClient))
}

func TestAuthenticateUnknownIssuer(t *testing.T) {
	t.Parallel()
	s := NewService(nil, "http://127.0.0.1:8080", "fideliza")
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	for name, raw := range map[string]string{
		"another issuer": authtest.Sign(t, jose.ES256, key, map[string]any{"typ": AccessTokenType},
			map[string]any{"iss": "https://idp.example.com", "tenant_id": testTenant}),
		"no issuer": authtest.Sign(t, jose.ES256, key, map[string]any{"typ": AccessTokenType},
			map[string]any{"tenant_id": testTenant}),
		"garbage":         "not.a.jwt",
		"two segments":    "eyJhbGciOiJub25lIn0.e30",
		"too long":        string(make([]byte, maxTokenBytes+1)),
		"issuer a number": authtest.Compact(t, map[string]any{"alg": "ES256"}, map[string]any{"iss": 1}, []byte("x")),
	} {
		_, err := s.Authenticate(context.Background(), raw)
		require.ErrorIs(t, err, ErrInvalidToken, name)
		require.False(t, errors.Is(err, context.Canceled))
	}
}
