// Package authtest helps tests of token verification: it signs arbitrary
// JWTs (attacks included) and runs a fake external OpenID provider.
package authtest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/require"
)

// Sign returns a compact JWS of claims signed with key (any key go-jose
// signs with: *ecdsa.PrivateKey, *rsa.PrivateKey, []byte for HMAC) and
// alg. header adds protected header fields such as "kid" and "typ"; a
// "typ" of nil leaves typ out.
func Sign(t testing.TB, alg jose.SignatureAlgorithm, key any, header map[string]any, claims map[string]any) string {
	t.Helper()
	opts := &jose.SignerOptions{}
	for k, v := range header {
		if v != nil {
			opts.WithHeader(jose.HeaderKey(k), v)
		}
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	require.NoError(t, err)
	payload, err := json.Marshal(claims)
	require.NoError(t, err)
	jws, err := signer.Sign(payload)
	require.NoError(t, err)
	raw, err := jws.CompactSerialize()
	require.NoError(t, err)
	return raw
}

// Compact assembles a JWS from a header, claims and signature bytes as
// given, for tokens no honest signer makes (alg "none", forged HMACs).
func Compact(t testing.TB, header, claims map[string]any, sig []byte) string {
	t.Helper()
	h, err := json.Marshal(header)
	require.NoError(t, err)
	c, err := json.Marshal(claims)
	require.NoError(t, err)
	enc := base64.RawURLEncoding
	return enc.EncodeToString(h) + "." + enc.EncodeToString(c) + "." + enc.EncodeToString(sig)
}

// Provider is a fake external OpenID provider on a loopback HTTP server: it
// serves a discovery document and a JWKS with one RSA key.
type Provider struct {
	URL   string
	Key   *rsa.PrivateKey
	KeyID string

	mu        sync.Mutex
	discovery map[string]any
	// signInClaims are the ID token claims of the user who signs in at
	// /authorize (SignInAs); codes maps issued codes to their PKCE
	// challenge and client.
	signInClaims map[string]any
	codes        map[string]issuedCode
}

type issuedCode struct{ challenge, clientID, redirectURI string }

// NewProvider starts a provider advertising RS256; it stops with the test.
func NewProvider(t testing.TB) *Provider {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	p := &Provider{Key: key, KeyID: "idp-key-1"}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		defer p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(p.discovery)
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
			{Key: &key.PublicKey, KeyID: p.KeyID, Algorithm: string(jose.RS256), Use: "sig"},
		}})
	})
	mux.HandleFunc("GET /authorize", p.authorize)
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) { p.token(t, w, r) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	p.discovery = map[string]any{
		"issuer":                                p.URL,
		"authorization_endpoint":                p.URL + "/authorize",
		"token_endpoint":                        p.URL + "/token",
		"jwks_uri":                              p.URL + "/jwks",
		"response_types_supported":              []string{"code"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{"RS256"},
	}
	return p
}

// SetDiscovery changes a field of the discovery document.
func (p *Provider) SetDiscovery(field string, value any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.discovery[field] = value
}

// Sign returns a token of the provider: RS256 with its key, typ "JWT".
func (p *Provider) Sign(t testing.TB, claims map[string]any) string {
	t.Helper()
	return Sign(t, jose.RS256, p.Key, map[string]any{"kid": p.KeyID, "typ": "JWT"}, claims)
}

// SignInAs makes /authorize sign in, at once and without a page, a user
// whose ID token carries claims (iss, aud, iat and exp are added).
func (p *Provider) SignInAs(claims map[string]any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.signInClaims = claims
}

// authorize is the authorization endpoint of the code flow with PKCE (S256
// only): it redirects back at once with a code.
func (p *Provider) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p.mu.Lock()
	defer p.mu.Unlock()
	back, err := url.Parse(q.Get("redirect_uri"))
	switch {
	case err != nil || q.Get("redirect_uri") == "":
		http.Error(w, "no redirect_uri", http.StatusBadRequest)
		return
	case q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "":
		http.Error(w, "want response_type=code with an S256 code challenge", http.StatusBadRequest)
		return
	}
	v := back.Query()
	v.Set("state", q.Get("state"))
	if p.signInClaims == nil {
		v.Set("error", "access_denied")
	} else {
		code := rand.Text()
		if p.codes == nil {
			p.codes = map[string]issuedCode{}
		}
		p.codes[code] = issuedCode{q.Get("code_challenge"), q.Get("client_id"), q.Get("redirect_uri")}
		v.Set("code", code)
	}
	back.RawQuery = v.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

// token redeems a code once, checking the PKCE verifier, and answers an
// opaque access token with a signed ID token.
func (p *Provider) token(t testing.TB, w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	issued, ok := p.codes[r.PostForm.Get("code")]
	delete(p.codes, r.PostForm.Get("code"))
	claims := maps.Clone(p.signInClaims)
	p.mu.Unlock()
	sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
	clientID := r.PostForm.Get("client_id")
	if id, _, basic := r.BasicAuth(); basic {
		clientID = id
	}
	w.Header().Set("Content-Type", "application/json")
	if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != issued.challenge ||
		clientID != issued.clientID || r.PostForm.Get("redirect_uri") != issued.redirectURI {
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant"})
		return
	}
	now := time.Now()
	claims["iss"], claims["iat"], claims["exp"] = p.URL, now.Unix(), now.Add(time.Hour).Unix()
	if _, ok := claims["aud"]; !ok {
		claims["aud"] = clientID
	}
	_ = json.NewEncoder(w).Encode(map[string]any{
		"access_token": "opaque-" + rand.Text(), "token_type": "Bearer", "expires_in": 3600,
		"id_token": p.Sign(t, claims),
	})
}
