package rest_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/auth/authtest"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/ent/schema/pid"
	"github.com/fideliza/fideliza/rest"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/testclock"
	"github.com/fideliza/fideliza/viewer"
)

const (
	testAudience = "fideliza"
	// countQuery is a tenant-scoped query needing customers:read: it counts
	// the viewer's tenant's customers.
	countQuery = `{ customers(first: 10) { totalCount } }`
)

// fixture is one Fideliza server over a test database, with a tenant.
type fixture struct {
	srv      *httptest.Server
	app      *app.App
	issuer   string
	tenantID string
	// tokenRequests counts POST /auth/token requests.
	tokenRequests atomic.Int64
}

// newFixture starts the shared test environment (rest.TestEnv), counting
// the token requests it serves; configure runs before it serves.
func newFixture(t *testing.T, db *storage.DB, configure ...func(*rest.ServerSetup)) *fixture {
	t.Helper()
	f := &fixture{}
	configure = append(configure, func(s *rest.ServerSetup) {
		s.Around = func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/auth/token" {
					f.tokenRequests.Add(1)
				}
				h.ServeHTTP(w, r)
			})
		}
	})
	env := rest.NewTestEnv(t, db, configure...)
	f.srv, f.app, f.tenantID = env.Server(), env.App(), env.TenantID()
	f.issuer = f.srv.URL
	return f
}

// testLogger logs warnings and errors to the test's output.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func sys() context.Context { return viewer.SystemContext(context.Background()) }

// client creates a client of the fixture's tenant.
func (f *fixture) client(t *testing.T, kind apiclient.Kind, scopes ...string) *backoffice.ClientCredentials {
	t.Helper()
	return f.clientOf(t, f.tenantID, kind, scopes...)
}

func (f *fixture) clientOf(t *testing.T, tenantID string, kind apiclient.Kind, scopes ...string) *backoffice.ClientCredentials {
	t.Helper()
	c, err := f.app.Backoffice.CreateClient(sys(), tenantID, kind, "test", scopes)
	require.NoError(t, err)
	return c
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(r.body, &m), "body: %s", r.body)
	return m
}

func do(t *testing.T, hc *http.Client, req *http.Request) response {
	t.Helper()
	res, err := hc.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return response{res.StatusCode, res.Header, body}
}

// requestToken posts a token request; basic, when set, is the id and secret
// of HTTP Basic client authentication.
func (f *fixture) requestToken(t *testing.T, form url.Values, basic ...string) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.srv.URL+"/auth/token", strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if len(basic) == 2 {
		req.SetBasicAuth(basic[0], basic[1])
	}
	return do(t, http.DefaultClient, req)
}

// token obtains an access token for c.
func (f *fixture) token(t *testing.T, c *backoffice.ClientCredentials, scope string) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}}
	if scope != "" {
		form.Set("scope", scope)
	}
	res := f.requestToken(t, form, c.Client.ID, c.Secret)
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	tok, _ := res.json(t)["access_token"].(string)
	require.NotEmpty(t, tok)
	return tok
}

// graphql runs countQuery with GET or POST, authenticated with token.
func (f *fixture) graphql(t *testing.T, hc *http.Client, method, token string) response {
	t.Helper()
	return f.graphqlQuery(t, hc, method, token, countQuery)
}

func (f *fixture) graphqlQuery(t *testing.T, hc *http.Client, method, token, query string) response {
	t.Helper()
	var req *http.Request
	var err error
	if method == http.MethodGet {
		req, err = http.NewRequest(method, f.srv.URL+"/graphql?query="+url.QueryEscape(query), nil)
	} else {
		body, _ := json.Marshal(map[string]string{"query": query})
		req, err = http.NewRequest(method, f.srv.URL+"/graphql", strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
	}
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	return do(t, hc, req)
}

// requireCount checks a successful countQuery and returns the count.
func requireCount(t *testing.T, res response) int {
	t.Helper()
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	var out struct {
		Data struct {
			Customers struct{ TotalCount int }
		}
		Errors []any
	}
	require.NoError(t, json.Unmarshal(res.body, &out))
	require.Empty(t, out.Errors, "%s", res.body)
	return out.Data.Customers.TotalCount
}

// requireInvalidToken checks an RFC 6750 refusal.
func requireInvalidToken(t *testing.T, res response) {
	t.Helper()
	require.Equal(t, http.StatusUnauthorized, res.status, "%s", res.body)
	require.Equal(t, "application/json", res.header.Get("Content-Type"))
	body := res.json(t)
	require.Equal(t, "invalid_token", body["error"])
	require.NotEmpty(t, body["error_description"])
	require.Regexp(t, oauthTextChars, body["error_description"])
	challenge := res.header.Get("WWW-Authenticate")
	require.True(t, strings.HasPrefix(challenge, "Bearer "), "WWW-Authenticate %q", challenge)
	require.Contains(t, challenge, `error="invalid_token"`)
}

func jwtHeader(t *testing.T, raw string) map[string]any {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(strings.Split(raw, ".")[0])
	require.NoError(t, err)
	var h map[string]any
	require.NoError(t, json.Unmarshal(b, &h))
	return h
}

func TestBearerRefusesForgedTokens(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newFixture(t, db)
		c := f.client(t, apiclient.KindOauth)
		issued := f.token(t, c, "")

		ours, err := f.app.Auth.Keys.Signing(context.Background())
		require.NoError(t, err)
		ourKey := ours.Key.(*ecdsa.PrivateKey)
		foreign, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		pubDER, err := x509.MarshalPKIXPublicKey(&ourKey.PublicKey)
		require.NoError(t, err)
		pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
		res := do(t, http.DefaultClient, mustGet(t, f.srv.URL+"/.well-known/jwks.json"))
		var jwks struct{ Keys []json.RawMessage }
		require.NoError(t, json.Unmarshal(res.body, &jwks))
		require.Len(t, jwks.Keys, 1)
		publishedJWK := []byte(jwks.Keys[0])

		now := time.Now()
		claims := func(change ...any) map[string]any {
			m := map[string]any{
				"iss": f.issuer, "sub": c.Client.ID, "aud": testAudience,
				"exp": now.Add(time.Hour).Unix(), "iat": now.Unix(), "jti": "test-jti",
				"scope": strings.Join(auth.Scopes, " "), "tenant_id": f.tenantID,
			}
			for i := 0; i < len(change); i += 2 {
				if change[i+1] == nil {
					delete(m, change[i].(string))
				} else {
					m[change[i].(string)] = change[i+1]
				}
			}
			return m
		}
		ourHeader := map[string]any{"kid": ours.KeyID, "typ": auth.AccessTokenType}
		header := func(kid, typ any) map[string]any { return map[string]any{"kid": kid, "typ": typ} }
		signOurs := func(claims map[string]any) string {
			return authtest.Sign(t, jose.ES256, ourKey, ourHeader, claims)
		}
		flipped := func() string {
			parts := strings.Split(issued, ".")
			sig, err := base64.RawURLEncoding.DecodeString(parts[2])
			require.NoError(t, err)
			sig[10] ^= 0x01
			parts[2] = base64.RawURLEncoding.EncodeToString(sig)
			return strings.Join(parts, ".")
		}()
		unknownKid := pid.New(pid.SigningKey) // shaped like ours: forces a reload
		tampered := func() string {
			parts := strings.Split(signOurs(claims()), ".")
			parts[1] = strings.Split(signOurs(claims("tenant_id", "00000000-0000-4000-8000-000000000000")), ".")[1]
			return strings.Join(parts, ".")
		}()

		cases := []struct {
			name  string
			token string
			ok    bool
		}{
			{"control: issued by the token endpoint", issued, true},
			{"control: signed with our key and the same claims as the attacks", signOurs(claims()), true},
			{"control: aud as a list that holds ours", signOurs(claims("aud", []string{"other", testAudience})), true},

			{"alg none", authtest.Compact(t, map[string]any{"alg": "none", "kid": ours.KeyID, "typ": auth.AccessTokenType}, claims(), nil), false},
			{"alg none, signature kept", authtest.Compact(t, map[string]any{"alg": "none", "kid": ours.KeyID, "typ": auth.AccessTokenType}, claims(), []byte("sig")), false},
			{"HS256 keyed with our public key PEM", authtest.Sign(t, jose.HS256, pubPEM, ourHeader, claims()), false},
			{"HS256 keyed with our published JWK", authtest.Sign(t, jose.HS256, publishedJWK, ourHeader, claims()), false},
			{"foreign ES256 key with an unknown kid", authtest.Sign(t, jose.ES256, foreign, header("attacker-key", auth.AccessTokenType), claims()), false},
			{"foreign ES256 key with a kid shaped like ours", authtest.Sign(t, jose.ES256, foreign, header(unknownKid, auth.AccessTokenType), claims()), false},
			{"foreign ES256 key using our kid", authtest.Sign(t, jose.ES256, foreign, ourHeader, claims()), false},
			{"foreign key embedded as jwk, no kid", authtest.Sign(t, jose.ES256, foreign,
				map[string]any{"typ": auth.AccessTokenType, "jwk": jose.JSONWebKey{Key: &foreign.PublicKey}}, claims()), false},
			{"our key under an unknown kid", authtest.Sign(t, jose.ES256, ourKey, header(unknownKid, auth.AccessTokenType), claims()), false},
			{"our key with no kid", authtest.Sign(t, jose.ES256, ourKey, header(nil, auth.AccessTokenType), claims()), false},
			{"expired", signOurs(claims("exp", now.Add(-time.Minute).Unix(), "iat", now.Add(-time.Hour).Unix())), false},
			{"no exp", signOurs(claims("exp", nil)), false},
			{"nbf ten minutes ahead", signOurs(claims("nbf", now.Add(10*time.Minute).Unix())), false},
			{"nbf three minutes ahead", signOurs(claims("nbf", now.Add(3*time.Minute).Unix())), false},
			{"wrong iss", signOurs(claims("iss", "https://evil.example.com")), false},
			{"iss with a trailing slash", signOurs(claims("iss", f.issuer+"/")), false},
			{"no iss", signOurs(claims("iss", nil)), false},
			{"wrong aud", signOurs(claims("aud", "another-api")), false},
			{"no aud", signOurs(claims("aud", nil)), false},
			{"typ JWT", authtest.Sign(t, jose.ES256, ourKey, header(ours.KeyID, "JWT"), claims()), false},
			{"no typ", authtest.Sign(t, jose.ES256, ourKey, header(ours.KeyID, nil), claims()), false},
			{"garbage", "garbage", false},
			{"three garbage segments", "a.b.c", false},
			{"one byte of the signature changed", flipped, false},
			{"payload changed to another tenant under the original signature", tampered, false},
			{"no tenant_id", signOurs(claims("tenant_id", nil)), false},
			{"empty tenant_id", signOurs(claims("tenant_id", "")), false},
			{"no sub", signOurs(claims("sub", nil)), false},
		}
		// Not parallel: the tokens' times (nbf, exp) are relative to now, and
		// a parallel subtest may wait for minutes on a loaded machine.
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				for _, method := range []string{http.MethodGet, http.MethodPost} {
					res := f.graphql(t, nil, method, tc.token)
					if tc.ok {
						require.Equal(t, 0, requireCount(t, res), method)
					} else {
						requireInvalidToken(t, res)
					}
				}
			})
		}

		// Not parallel either: a parallel subtest waits for every other
		// parallel test of the package, and its parent's time with it.
		t.Run("no token", func(t *testing.T) {
			res := f.graphql(t, nil, http.MethodPost, "")
			require.Equal(t, http.StatusUnauthorized, res.status)
			require.Equal(t, "invalid_token", res.json(t)["error"])
			require.Equal(t, `Bearer realm="fideliza"`, res.header.Get("WWW-Authenticate"), "RFC 6750 §3.1: no error code without credentials")
		})
	})
}

func mustGet(t *testing.T, u string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	require.NoError(t, err)
	return req
}

func TestKeyRotation(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		f := newFixture(t, db)
		c := f.client(t, apiclient.KindOauth)

		// A second server over the same database, as another process would be.
		second := auth.NewService(db.Ent, f.issuer, testAudience)
		secondSrv := httptest.NewServer(contractCheck(t, rest.NewHandler(app.New(&app.Config{DB: db, Auth: second, Log: testLogger(t)}), testLogger(t), rest.Config{})))
		t.Cleanup(secondSrv.Close)
		viaSecond := func(t *testing.T, token string) response {
			t.Helper()
			req := mustGet(t, secondSrv.URL+"/graphql?query="+url.QueryEscape(countQuery))
			req.Header.Set("Authorization", "Bearer "+token)
			return do(t, http.DefaultClient, req)
		}

		// Both processes read keys on one clock the test moves.
		clock := testclock.New(time.Now())
		f.app.Auth.Keys.Clock, second.Keys.Clock = clock.Now, clock.Now

		t1 := f.token(t, c, "")
		kid1 := jwtHeader(t, t1)["kid"].(string)
		// The second process verifies T1 now, so its key cache is fresh
		// when the rotation happens.
		requireCount(t, viaSecond(t, t1))

		newKid, err := f.app.Auth.Keys.Rotate(ctx)
		require.NoError(t, err)
		require.Equal(t, kid1, jwtHeader(t, f.token(t, c, ""))["kid"], "the new key is published before it signs")
		clock.Advance(auth.PublishLead)
		t2 := f.token(t, c, "")
		kid2 := jwtHeader(t, t2)["kid"].(string)
		require.NotEqual(t, kid1, kid2)
		require.Equal(t, newKid, kid2, "T2 is signed by the new key once it has been published for PublishLead")

		for name, tok := range map[string]string{"T1": t1, "T2": t2} {
			requireCount(t, f.graphql(t, nil, http.MethodPost, tok))
			// The second process has T1's key cached and must reload at
			// once to know T2's, well within its cache lifetime.
			requireCount(t, viaSecond(t, tok))
			v, err := second.Authenticate(ctx, tok)
			require.NoError(t, err, name)
			require.Equal(t, f.tenantID, v.TenantID)
		}

		// JWKS: both keys, public parameters only.
		res := do(t, http.DefaultClient, mustGet(t, f.srv.URL+"/.well-known/jwks.json"))
		require.Equal(t, http.StatusOK, res.status)
		var set struct{ Keys []map[string]any }
		require.NoError(t, json.Unmarshal(res.body, &set))
		var kids []string
		for _, k := range set.Keys {
			kids = append(kids, k["kid"].(string))
			require.NotContains(t, k, "d", "a private key parameter is published")
			for field := range k {
				require.Contains(t, []string{"kty", "crv", "x", "y", "kid", "alg", "use"}, field)
			}
			require.Equal(t, "EC", k["kty"])
			require.Equal(t, "ES256", k["alg"])
		}
		require.ElementsMatch(t, []string{kid1, kid2}, kids)
		require.NotContains(t, string(res.body), `"d"`)

		// Any OIDC library can verify both from the discovery document.
		provider, err := oidc.NewProvider(ctx, f.issuer)
		require.NoError(t, err)
		verifier := provider.Verifier(&oidc.Config{ClientID: testAudience})
		for _, tok := range []string{t1, t2} {
			_, err := verifier.Verify(ctx, tok)
			require.NoError(t, err)
		}
	})
}

func TestOAuth2Client(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newFixture(t, db)
		c := f.client(t, apiclient.KindOauth)
		styles := []struct {
			name  string
			style oauth2.AuthStyle
		}{
			{"client_secret_post", oauth2.AuthStyleInParams},
			{"client_secret_basic", oauth2.AuthStyleInHeader},
		}
		for _, st := range styles {
			t.Run(st.name, func(t *testing.T) {
				ctx := context.Background()
				cfg := clientcredentials.Config{
					ClientID:     c.Client.ID,
					ClientSecret: c.Secret,
					TokenURL:     f.srv.URL + "/auth/token",
					Scopes:       []string{"customers:read", "campaigns:read"},
					AuthStyle:    st.style,
				}

				// The client fetches a token once and reuses it.
				before := f.tokenRequests.Load()
				hc := cfg.Client(ctx)
				requireCount(t, f.graphql(t, hc, http.MethodPost, ""))
				requireCount(t, f.graphql(t, hc, http.MethodGet, ""))
				require.Equal(t, before+1, f.tokenRequests.Load())

				src := cfg.TokenSource(ctx)
				tok1, err := src.Token()
				require.NoError(t, err)
				require.Equal(t, "Bearer", tok1.TokenType)
				require.Equal(t, "customers:read campaigns:read", tok1.Extra("scope"))
				require.Empty(t, tok1.RefreshToken)
				require.WithinDuration(t, time.Now().Add(auth.TokenLifetime), tok1.Expiry, time.Minute)

				// Renewal: the cached token has expired, so the next call
				// fetches a new one and goes on working.
				expired := &oauth2.Token{AccessToken: tok1.AccessToken, TokenType: "Bearer", Expiry: time.Now().Add(-time.Second)}
				renewing := oauth2.ReuseTokenSource(expired, src)
				before = f.tokenRequests.Load()
				requireCount(t, f.graphql(t, oauth2.NewClient(ctx, renewing), http.MethodPost, ""))
				require.Equal(t, before+1, f.tokenRequests.Load(), "an expired token is renewed")
				tok2, err := renewing.Token()
				require.NoError(t, err)
				require.NotEqual(t, tok1.AccessToken, tok2.AccessToken)
				require.Equal(t, before+1, f.tokenRequests.Load(), "the renewed token is reused")

				// Early expiry: a token within its last hour counts as expired.
				eager := oauth2.ReuseTokenSourceWithExpiry(nil, cfg.TokenSource(ctx), auth.TokenLifetime)
				before = f.tokenRequests.Load()
				_, err = eager.Token()
				require.NoError(t, err)
				_, err = eager.Token()
				require.NoError(t, err)
				require.Equal(t, before+2, f.tokenRequests.Load())

				// A wrong secret is an RFC 6749 error the library understands.
				bad := cfg
				bad.ClientSecret = "fzs_wrong"
				_, err = bad.Token(ctx)
				var re *oauth2.RetrieveError
				require.ErrorAs(t, err, &re)
				require.Equal(t, "invalid_client", re.ErrorCode)
				require.Equal(t, http.StatusUnauthorized, re.Response.StatusCode)
			})
		}
	})
}
