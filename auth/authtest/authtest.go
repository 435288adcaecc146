// Package authtest helps tests of token verification: it signs arbitrary
// JWTs (attacks included) and runs a fake external OpenID provider.
package authtest

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

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
}

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
