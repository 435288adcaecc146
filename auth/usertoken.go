package auth

import (
	"context"
	"fmt"
	"time"

	"github.com/fideliza/fideliza/viewer"
)

const (
	// DefaultUserTokenLifetime is how long an operator-issued user token
	// lives unless asked otherwise.
	DefaultUserTokenLifetime = 8 * time.Hour
	// LongestTokenLifetime bounds every token this service signs: retired
	// signing keys stay published and kept at least this long.
	LongestTokenLifetime = 12 * time.Hour
)

// userClaims are the claims of a back-office user token this service signs:
// a client token's claims with the user's role instead of scopes.
type userClaims struct {
	claims
	Role string `json:"role"`
}

// UserTokenClient is the client_id of the tokens IssueUserToken signs: the
// command line that issues them.
const UserTokenClient = "fideliza-cli"

// IssueUserToken signs a token for a back-office user of tenantID with role
// admin or analyst, for installations without an external provider: an
// operator issues it with the CLI and the user pastes it into the developer
// panel or the playground. subject names the user in logs.
func (s *Service) IssueUserToken(ctx context.Context, tenantID string, role viewer.Role, subject string, ttl time.Duration) (string, error) {
	if role != viewer.RoleAdmin && role != viewer.RoleAnalyst {
		return "", fmt.Errorf("role must be admin or analyst, not %q", role)
	}
	if ttl <= 0 || ttl > LongestTokenLifetime {
		return "", fmt.Errorf("lifetime must be between 1s and %s", LongestTokenLifetime)
	}
	if subject == "" {
		return "", fmt.Errorf("a subject naming the user is required")
	}
	t, err := s.client.Tenant.Get(viewer.SystemContext(ctx), tenantID)
	if err != nil {
		return "", fmt.Errorf("tenant %s: %w", tenantID, err)
	}
	now := time.Now()
	return s.sign(ctx, userClaims{Role: string(role), claims: claims{
		Issuer: s.Issuer, Subject: "user:" + subject, Audience: s.Audience,
		Expiry: now.Add(ttl).Unix(), IssuedAt: now.Unix(), ID: randomID(), TenantID: t.ID, ClientID: UserTokenClient,
	}})
}
