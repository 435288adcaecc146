package backoffice

import (
	"context"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/ent/tenant"
	"github.com/fideliza/fideliza/viewer"
)

// maxCORSOrigins bounds a tenant's back-office origins.
const maxCORSOrigins = 20

// CORSOrigin reads an origin as a browser sends it (scheme://host[:port],
// http or https, no path, query or user) and returns it in lower case; an
// error names what is wrong.
func CORSOrigin(s string) (string, error) {
	u, err := url.Parse(s)
	switch {
	case err != nil || u.Host == "" || u.Opaque != "":
		return "", apperr.Invalid("cors_origins", "%q is not an origin such as https://backoffice.example.com", s)
	case u.Scheme != "https" && u.Scheme != "http":
		return "", apperr.Invalid("cors_origins", "%q: an origin's scheme is https or http", s)
	case u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "#"):
		return "", apperr.Invalid("cors_origins", "%q: an origin is scheme://host[:port] only, without a path, query or user", s)
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), nil
}

// corsOrigins checks and normalizes a tenant's origins.
func corsOrigins(origins []string) ([]string, error) {
	if len(origins) > maxCORSOrigins {
		return nil, apperr.Invalid("cors_origins", "at most %d origins", maxCORSOrigins)
	}
	out := make([]string, 0, len(origins))
	for _, o := range origins {
		n, err := CORSOrigin(o)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// originsTTL bounds how long another process's change of a tenant's origins
// takes to be seen here; a change made in this process is seen at once.
const originsTTL = 10 * time.Second

// originsCache holds every tenant's back-office origins: the browser's
// preflight carries no token, so which tenant an origin belongs to is
// decided on the request that follows.
type originsCache struct {
	mu       sync.Mutex
	loaded   time.Time
	byOrigin map[string]map[string]bool // origin → the tenants allowing it
}

func (c *originsCache) invalidate() {
	c.mu.Lock()
	c.loaded = time.Time{}
	c.mu.Unlock()
}

// TenantsAllowingOrigin returns the tenants whose back-office origins
// include origin (normalized by CORSOrigin), read at most originsTTL ago.
func (a *Service) TenantsAllowingOrigin(ctx context.Context, origin string) (map[string]bool, error) {
	if err := Rules.TenantsAllowingOrigin.Allow(ctx); err != nil {
		return nil, err
	}
	c := &a.origins
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Since(c.loaded) >= originsTTL {
		tenants, err := a.k.DB.Ent.Tenant.Query().Where(tenant.CorsOriginsNotNil()).
			Select(tenant.FieldID, tenant.FieldCorsOrigins).All(viewer.SystemContext(ctx))
		if err != nil {
			return nil, err
		}
		c.byOrigin = map[string]map[string]bool{}
		for _, t := range tenants {
			for _, o := range t.CorsOrigins {
				if c.byOrigin[o] == nil {
					c.byOrigin[o] = map[string]bool{}
				}
				c.byOrigin[o][t.ID] = true
			}
		}
		c.loaded = time.Now()
	}
	return c.byOrigin[origin], nil
}
