package auth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-jose/go-jose/v4"

	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/viewer"
)

const (
	// TokenLifetime is the validity of an access token.
	TokenLifetime = time.Hour
	// AccessTokenType is the JWS "typ" of access tokens (RFC 9068).
	AccessTokenType = "at+jwt"
)

// Scopes of the OAuth interface.
var Scopes = []string{
	"customers:read", "customers:write",
	"campaigns:read", "campaigns:write",
	"loyalty:read", "loyalty:write",
	"webhooks:read", "webhooks:write",
	"privacy:read", "privacy:write",
}

// OAuthError is an error of the token endpoint (RFC 6749 §5.2).
type OAuthError struct {
	Status      int
	Code        string
	Description string
	RetryAfter  time.Duration // set on 429
}

func (e *OAuthError) Error() string { return e.Code + ": " + e.Description }

var errInvalidClient = &OAuthError{Status: http.StatusUnauthorized, Code: "invalid_client", Description: "client authentication failed"}

// Service issues access tokens and verifies them.
type Service struct {
	Issuer   string // iss of our tokens, and the base URL of the discovery document
	Audience string // aud of our tokens
	Keys     *Keys
	client   *ent.Client
	verifier tokenVerifier
	external *external // nil unless UseOIDC configured a provider
	throttle throttle
	checks   clientChecks
	links    signInLinks
	// ClientCheckTTL is how long a token's client is trusted without
	// looking again (DefaultClientCheckTTL; tests set 0).
	ClientCheckTTL time.Duration
}

// NewService returns the token service of client.
func NewService(client *ent.Client, issuer, audience string) *Service {
	s := &Service{Issuer: strings.TrimRight(issuer, "/"), Audience: audience, Keys: NewKeys(client), client: client, throttle: newThrottle(),
		ClientCheckTTL: DefaultClientCheckTTL}
	s.verifier = rememberVerified(newVerifier(s.Issuer, audience, s.Keys))
	return s
}

// TokenRequest is a client credentials grant.
type TokenRequest struct {
	GrantType    string
	ClientID     string
	ClientSecret string
	Scope        string // space-separated; empty asks for every allowed scope
}

// Token is an issued access token.
type Token struct {
	AccessToken string
	ExpiresIn   int
	Scope       string
}

type claims struct {
	Issuer   string `json:"iss"`
	Subject  string `json:"sub"`
	Audience string `json:"aud"`
	Expiry   int64  `json:"exp"`
	IssuedAt int64  `json:"iat"`
	ID       string `json:"jti"`
	Scope    string `json:"scope"`
	TenantID string `json:"tenant_id"`
	// ClientID is RFC 9068's client_id: the client the token was issued
	// to (for a client's token, its sub too).
	ClientID string `json:"client_id"`
}

// IssueToken runs the client credentials grant.
func (s *Service) IssueToken(ctx context.Context, req TokenRequest) (*Token, error) {
	if req.GrantType != "client_credentials" {
		if req.GrantType == "" {
			return nil, &OAuthError{Status: http.StatusBadRequest, Code: "invalid_request", Description: "grant_type is required"}
		}
		return nil, &OAuthError{Status: http.StatusBadRequest, Code: "unsupported_grant_type", Description: "only client_credentials is supported"}
	}
	if req.ClientID == "" || req.ClientSecret == "" {
		return nil, &OAuthError{Status: http.StatusUnauthorized, Code: "invalid_client", Description: "client authentication failed"}
	}
	if wait := s.throttle.retryAfter(req.ClientID); wait > 0 {
		return nil, &OAuthError{Status: http.StatusTooManyRequests, Code: "too_many_requests", Description: lockoutMessage, RetryAfter: wait}
	}
	c, err := s.authenticateClient(ctx, req.ClientID, req.ClientSecret)
	if errors.Is(err, errInvalidClient) {
		s.throttle.fail(req.ClientID)
	}
	if err != nil {
		return nil, err
	}
	granted := c.Scopes
	if asked := strings.Fields(req.Scope); len(asked) > 0 {
		granted = nil
		for _, sc := range asked {
			if !slices.Contains(c.Scopes, sc) {
				return nil, &OAuthError{Status: http.StatusBadRequest, Code: "invalid_scope", Description: fmt.Sprintf("scope '%s' is not allowed for this client", sc)}
			}
			if !slices.Contains(granted, sc) {
				granted = append(granted, sc)
			}
		}
	}
	now := time.Now()
	cl := claims{
		Issuer: s.Issuer, Subject: c.ID, Audience: s.Audience,
		Expiry: now.Add(TokenLifetime).Unix(), IssuedAt: now.Unix(), ID: randomID(),
		Scope: strings.Join(granted, " "), TenantID: c.TenantID, ClientID: c.ID,
	}
	raw, err := s.sign(ctx, cl)
	if err != nil {
		return nil, err
	}
	return &Token{AccessToken: raw, ExpiresIn: int(TokenLifetime.Seconds()), Scope: cl.Scope}, nil
}

// authenticateClient finds an active OAuth client and checks its secret. Every
// failure is the same invalid_client, so callers cannot tell which part was wrong.
func (s *Service) authenticateClient(ctx context.Context, id, secret string) (*ent.APIClient, error) {
	c, err := s.clientWithSecret(ctx, apiclient.KindOauth, id, secret)
	if err != nil {
		return nil, err
	}
	if c == nil || !c.Edges.Tenant.Active {
		return nil, errInvalidClient
	}
	return c, nil
}

// clientWithSecret returns the unrevoked client of kind whose secret is
// secret, with its tenant, or nil. An unknown id costs the same work as a
// wrong secret.
func (s *Service) clientWithSecret(ctx context.Context, kind apiclient.Kind, id, secret string) (*ent.APIClient, error) {
	if !utf8.ValidString(id) || strings.ContainsRune(id, 0) {
		// No client has such an id, and PostgreSQL would fail the query
		// (invalid UTF-8, NUL) instead of finding none.
		SecretMatches(secret, HashSecret(""))
		return nil, nil
	}
	c, err := s.client.APIClient.Query().
		Where(apiclient.ID(id), apiclient.KindEQ(kind)).
		WithTenant().
		Only(viewer.SystemContext(ctx))
	if ent.IsNotFound(err) {
		SecretMatches(secret, HashSecret(""))
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !SecretMatches(secret, c.SecretHash) || c.Revoked {
		return nil, nil
	}
	return c, nil
}

func (s *Service) sign(ctx context.Context, cl any) (string, error) {
	key, err := s.Keys.Signing(ctx)
	if err != nil {
		return "", err
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: signingAlg, Key: key},
		(&jose.SignerOptions{}).WithType(AccessTokenType))
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(cl)
	if err != nil {
		return "", err
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		return "", err
	}
	return jws.CompactSerialize()
}

func randomID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// ErrInvalidToken is returned for any token that does not verify.
var ErrInvalidToken = errors.New("invalid token")
