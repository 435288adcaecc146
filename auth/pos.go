package auth

import (
	"context"
	"errors"
	"time"

	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/ent/tenant"
	"github.com/fideliza/fideliza/viewer"
)

// Errors of AuthenticatePOS, in the order the checks run.
var (
	ErrPOSUnauthorized = errors.New("invalid point-of-sale credentials")
	ErrTenantNotFound  = errors.New("tenant not found or inactive")
)

// AuthenticatePOS checks HTTP Basic credentials of a POS client against the
// tenant of the path. An unknown client, a wrong secret and a revoked client
// are the same ErrPOSUnauthorized. Genuine credentials then meet the path's
// tenant: one that does not exist, or is inactive, is ErrTenantNotFound;
// another tenant than the client's is ErrPOSUnauthorized. Only a caller
// holding genuine credentials learns whether a tenant id exists.
//
// A successful login is remembered for POSLoginTTL (at most ClientCheckTTL)
// under the client and the hash of the secret presented, so a point of sale
// does not cost a database read per request: a revocation, a rotation or a
// deactivated tenant takes effect within it (at once in the process that
// made the change, see Forget).
func (s *Service) AuthenticatePOS(ctx context.Context, tenantID, clientID, secret string) (viewer.Viewer, error) {
	key := clientID + "\x00" + HashSecret(secret)
	if v, ok := s.checks.login(key); ok && v.TenantID == tenantID {
		return v, nil
	}
	c, err := s.clientWithSecret(ctx, apiclient.KindPos, clientID, secret)
	switch {
	case err != nil:
		return viewer.Viewer{}, err
	case c == nil:
		return viewer.Viewer{}, ErrPOSUnauthorized
	case c.TenantID != tenantID:
		exists, err := s.client.Tenant.Query().Where(tenant.ID(tenantID)).Exist(viewer.SystemContext(ctx))
		if err != nil {
			return viewer.Viewer{}, err
		}
		if !exists {
			return viewer.Viewer{}, ErrTenantNotFound
		}
		return viewer.Viewer{}, ErrPOSUnauthorized
	case !c.Edges.Tenant.Active:
		return viewer.Viewer{}, ErrTenantNotFound
	}
	v := viewer.Viewer{Role: viewer.RoleClient, TenantID: c.TenantID, Subject: c.ID, Scopes: []string{ScopePOS}}
	s.checks.remember(key, v, time.Now().Add(min(POSLoginTTL, s.ClientCheckTTL)))
	return v, nil
}

// POSLoginTTL is how long a point-of-sale login is remembered.
const POSLoginTTL = 5 * time.Second

// ScopePOS is held by point-of-sale clients, which authenticate with HTTP
// Basic on the tenant paths; it cannot be requested at /auth/token.
const ScopePOS = "pos"
