package auth

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/viewer"
)

// DefaultClientCheckTTL is how long a process trusts its answer to "is this
// token's client still valid": a revoked client or a deactivated tenant
// loses access within it, not when its tokens expire (an hour).
const DefaultClientCheckTTL = 30 * time.Second

// clientChecks caches, per client id, whether its tokens are still good,
// and the point-of-sale logins that succeeded.
type clientChecks struct {
	mu      sync.Mutex
	entries map[string]clientCheck
	logins  map[string]posLogin
}

type posLogin struct {
	viewer viewer.Viewer
	until  time.Time
}

func (c *clientChecks) login(key string) (viewer.Viewer, bool) {
	c.mu.Lock()
	l, ok := c.logins[key]
	c.mu.Unlock()
	return l.viewer, ok && time.Now().Before(l.until)
}

func (c *clientChecks) remember(key string, v viewer.Viewer, until time.Time) {
	c.mu.Lock()
	if c.logins == nil || len(c.logins) > maxTrackedIDs {
		c.logins = map[string]posLogin{}
	}
	c.logins[key] = posLogin{viewer: v, until: until}
	c.mu.Unlock()
}

type clientCheck struct {
	valid bool
	until time.Time
}

// clientStillValid reports whether the token's client exists, is not
// revoked, belongs to the token's tenant and that tenant is active. A
// database error lets the request through: it will meet the database again
// and fail there, where the error is answered properly.
func (s *Service) clientStillValid(ctx context.Context, clientID, tenantID string) bool {
	// The answer depends on both: keyed by the client alone, a token naming
	// another tenant would read (or poison) the client's cached answer.
	return s.stillValid(ctx, clientCheckKey(clientID, tenantID), func(ctx context.Context) (bool, error) {
		c, err := s.client.APIClient.Query().Where(apiclient.ID(clientID)).WithTenant().Only(ctx)
		if ent.IsNotFound(err) {
			return false, nil
		}
		return err == nil && !c.Revoked && c.TenantID == tenantID && c.Edges.Tenant.Active, err
	})
}

// clientCheckKey is the cache key of a client's check in a tenant.
func clientCheckKey(clientID, tenantID string) string {
	return "client:" + clientID + "\x00" + tenantID
}

// tenantStillActive reports whether a user token's tenant exists and is
// active, as clientStillValid does for clients.
func (s *Service) tenantStillActive(ctx context.Context, tenantID string) bool {
	return s.stillValid(ctx, "tenant:"+tenantID, func(ctx context.Context) (bool, error) {
		t, err := s.client.Tenant.Get(ctx, tenantID)
		if ent.IsNotFound(err) {
			return false, nil
		}
		return err == nil && t.Active, err
	})
}

// stillValid answers check for key from a cache of ClientCheckTTL.
func (s *Service) stillValid(ctx context.Context, key string, check func(context.Context) (bool, error)) bool {
	now := time.Now()
	s.checks.mu.Lock()
	e, ok := s.checks.entries[key]
	s.checks.mu.Unlock()
	if ok && now.Before(e.until) {
		return e.valid
	}
	valid, err := check(viewer.SystemContext(ctx))
	if err != nil {
		return true
	}
	s.checks.mu.Lock()
	if s.checks.entries == nil || len(s.checks.entries) > maxTrackedIDs {
		s.checks.entries = map[string]clientCheck{}
	}
	s.checks.entries[key] = clientCheck{valid: valid, until: now.Add(s.ClientCheckTTL)}
	s.checks.mu.Unlock()
	return valid
}

// Forget drops what this process remembers of a tenant's or a client's
// credentials (either may be ""), so an operator's deactivation, revocation
// or rotation takes effect here at once; other processes follow within
// ClientCheckTTL.
func (s *Service) Forget(tenantID, clientID string) {
	if s == nil {
		return
	}
	c := &s.checks
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, l := range c.logins {
		if (tenantID != "" && l.viewer.TenantID == tenantID) || (clientID != "" && l.viewer.Subject == clientID) {
			delete(c.logins, key)
		}
	}
	for key := range c.entries {
		if (clientID != "" && strings.HasPrefix(key, "client:"+clientID+"\x00")) ||
			(tenantID != "" && (key == "tenant:"+tenantID || strings.HasSuffix(key, "\x00"+tenantID))) {
			delete(c.entries, key)
		}
	}
}
