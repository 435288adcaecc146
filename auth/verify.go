package auth

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/fideliza/fideliza/viewer"
)

// maxTokenBytes bounds the bearer tokens we look into; ours are about 600
// bytes, an external provider's a few kilobytes.
const maxTokenBytes = 16 << 10

// notBeforeLeeway is the clock skew allowed on nbf.
const notBeforeLeeway = time.Minute

type tokenVerifier interface {
	Verify(ctx context.Context, raw string) (*oidc.IDToken, error)
}

// newVerifier pins the algorithm, the issuer and the audience of our tokens;
// go-oidc checks them and the expiry, our key set checks typ and the signature.
func newVerifier(issuer, audience string, keys *Keys) tokenVerifier {
	return oidc.NewVerifier(issuer, keys, &oidc.Config{
		ClientID:             audience,
		SupportedSigningAlgs: []string{string(signingAlg)},
	})
}

// Authenticate verifies a bearer token and returns its viewer: an OAuth client
// for our own tokens, a back-office admin or analyst for tokens of the
// external OpenID provider (see UseOIDC). The token's unverified iss only
// picks the verifier; each verifier checks iss again with the signature. Every
// token that does not verify is an error wrapping ErrInvalidToken.
func (s *Service) Authenticate(ctx context.Context, raw string) (viewer.Viewer, error) {
	header, iss, err := peek(raw)
	if err != nil {
		return viewer.Viewer{}, invalidf("%v", err)
	}
	switch {
	case iss == s.Issuer:
		return s.authenticateOwn(ctx, raw)
	case s.external != nil && iss == s.external.issuer:
		return s.external.authenticate(ctx, raw, header)
	default:
		return viewer.Viewer{}, invalidf("unknown issuer %q", iss)
	}
}

// authenticateOwn verifies an access token of our token endpoint.
func (s *Service) authenticateOwn(ctx context.Context, raw string) (viewer.Viewer, error) {
	tok, err := s.verifier.Verify(ctx, raw)
	if err != nil {
		return viewer.Viewer{}, invalidf("%v", err)
	}
	var cl struct {
		Expiry    json.RawMessage `json:"exp"`
		NotBefore json.RawMessage `json:"nbf"`
		Scope     string          `json:"scope"`
		TenantID  string          `json:"tenant_id"`
		Role      string          `json:"role"`
		ClientID  string          `json:"client_id"`
	}
	if err := tok.Claims(&cl); err != nil {
		return viewer.Viewer{}, invalidf("%v", err)
	}
	if err := checkNotBefore(cl.NotBefore); err != nil {
		return viewer.Viewer{}, err
	}
	if !isJSONNumber(cl.Expiry) { // go-oidc also reads an exp written as a string
		return viewer.Viewer{}, invalidf("exp is not a number")
	}
	if cl.TenantID == "" {
		return viewer.Viewer{}, invalidf("no tenant_id")
	}
	if tok.Subject == "" {
		return viewer.Viewer{}, invalidf("no sub")
	}
	if cl.Role != "" { // a back-office user token (IssueUserToken)
		role := viewer.Role(cl.Role)
		if (role != viewer.RoleAdmin && role != viewer.RoleAnalyst) || !strings.HasPrefix(tok.Subject, "user:") {
			return viewer.Viewer{}, invalidf("role %q is not a back-office role", cl.Role)
		}
		if !s.tenantStillActive(ctx, cl.TenantID) {
			return viewer.Viewer{}, invalidf("tenant %s is inactive", cl.TenantID)
		}
		return viewer.Viewer{Role: role, TenantID: cl.TenantID, Subject: tok.Subject, Scopes: RoleScopes(role)}, nil
	}
	if cl.ClientID != "" && cl.ClientID != tok.Subject {
		// Tokens signed before client_id was added have none; any other
		// names the client the token was issued to, its sub.
		return viewer.Viewer{}, invalidf("client_id is not the token's sub")
	}
	if !s.clientStillValid(ctx, tok.Subject, cl.TenantID) {
		return viewer.Viewer{}, invalidf("client %s is revoked or its tenant inactive", tok.Subject)
	}
	return viewer.Viewer{
		Role:     viewer.RoleClient,
		TenantID: cl.TenantID,
		Subject:  tok.Subject,
		Scopes:   strings.Fields(cl.Scope),
	}, nil
}

// isJSONNumber says whether raw is a JSON number.
func isJSONNumber(raw json.RawMessage) bool {
	var n json.Number
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return len(raw) > 0 && raw[0] != '"' && dec.Decode(&n) == nil
}

// checkNotBefore refuses a token whose nbf is more than the leeway ahead.
func checkNotBefore(raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var nbf float64
	if err := json.Unmarshal(raw, &nbf); err != nil {
		return invalidf("nbf is not a number")
	}
	if time.Unix(int64(nbf), 0).After(time.Now().Add(notBeforeLeeway)) {
		return invalidf("not valid yet")
	}
	return nil
}

type jwtHeader struct {
	Type string `json:"typ"`
}

// peek reads the header and the issuer of a compact JWS without verifying
// anything: only to choose the verifier.
func peek(raw string) (jwtHeader, string, error) {
	var h jwtHeader
	if len(raw) > maxTokenBytes {
		return h, "", errors.New("token too long")
	}
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return h, "", errors.New("not a compact JWS")
	}
	if err := decodeSegment(parts[0], &h); err != nil {
		return h, "", fmt.Errorf("header: %w", err)
	}
	var cl struct {
		Issuer string `json:"iss"`
	}
	if err := decodeSegment(parts[1], &cl); err != nil {
		return h, "", fmt.Errorf("payload: %w", err)
	}
	return h, cl.Issuer, nil
}

func decodeSegment(seg string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidToken, fmt.Sprintf(format, args...))
}
