package auth

import (
	"context"
	"errors"

	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/ent/schema/viewer"
)

// Errors of AuthenticatePOS, in the order the checks run.
var (
	ErrPOSUnauthorized = errors.New("invalid point-of-sale credentials")
	ErrTenantInactive  = errors.New("tenant not found or inactive")
)

// AuthenticatePOS checks HTTP Basic credentials of a POS client against the
// tenant of the path. An unknown client, a wrong secret, a revoked client and
// a client of another tenant are the same ErrPOSUnauthorized; an inactive
// tenant is ErrTenantInactive, checked only after the credentials.
func (s *Service) AuthenticatePOS(ctx context.Context, tenantID, clientID, secret string) (viewer.Viewer, error) {
	c, err := s.clientWithSecret(ctx, apiclient.KindPos, clientID, secret)
	if err != nil {
		return viewer.Viewer{}, err
	}
	if c == nil || c.TenantID != tenantID {
		return viewer.Viewer{}, ErrPOSUnauthorized
	}
	if !c.Edges.Tenant.Active {
		return viewer.Viewer{}, ErrTenantInactive
	}
	return viewer.Viewer{Role: viewer.RoleClient, TenantID: c.TenantID, Subject: c.ID, Scopes: []string{ScopePOS}}, nil
}

// ScopePOS is held by point-of-sale clients, which authenticate with HTTP
// Basic on the tenant paths; it cannot be requested at /auth/token.
const ScopePOS = "pos"
