package auth

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/fideliza/fideliza/ent/schema/viewer"
)

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

// Authenticate verifies a bearer token and returns its viewer.
func (s *Service) Authenticate(ctx context.Context, raw string) (viewer.Viewer, error) {
	tok, err := s.verifier.Verify(ctx, raw)
	if err != nil {
		return viewer.Viewer{}, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	var cl struct {
		NotBefore int64  `json:"nbf"`
		Scope     string `json:"scope"`
		TenantID  string `json:"tenant_id"`
	}
	if err := tok.Claims(&cl); err != nil {
		return viewer.Viewer{}, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	if cl.NotBefore != 0 && time.Unix(cl.NotBefore, 0).After(time.Now().Add(time.Minute)) {
		return viewer.Viewer{}, fmt.Errorf("%w: not valid yet", ErrInvalidToken)
	}
	if cl.TenantID == "" {
		return viewer.Viewer{}, fmt.Errorf("%w: no tenant_id", ErrInvalidToken)
	}
	return viewer.Viewer{
		Role:     viewer.RoleClient,
		TenantID: cl.TenantID,
		Subject:  tok.Subject,
		Scopes:   strings.Fields(cl.Scope),
	}, nil
}
