package ratelimit

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// The quotas used when a Config leaves one unset.
var (
	// DefaultQuota is each authenticated client's quota (OAuth client,
	// back-office user, POS client), and each IP address's for requests
	// with an invalid bearer token.
	DefaultQuota = Quota{Limit: 600, Window: time.Minute}
	// DefaultTokenQuota is each IP address's quota on /auth/token.
	DefaultTokenQuota = Quota{Limit: 20, Window: time.Minute}
	// DefaultAuthFailureQuota is how many failed HTTP Basic authentications
	// of the point-of-sale interface an IP address may make.
	DefaultAuthFailureQuota = Quota{Limit: 10, Window: time.Minute}
)

// Config holds the rate limits of a server. Its zero value is the defaults.
type Config struct {
	// Default is each authenticated client's quota; zero: DefaultQuota.
	Default Quota
	// Tenants overrides Default for the clients of a tenant, by tenant id.
	Tenants map[string]Quota
	// Token is each IP address's quota on /auth/token; zero:
	// DefaultTokenQuota.
	Token Quota
	// AuthFailures is each IP address's quota of failed HTTP Basic
	// authentications; zero: DefaultAuthFailureQuota.
	AuthFailures Quota
	// Now is the clock of the windows; nil: time.Now. Tests set it.
	Now func() time.Time
	// MaxKeys bounds the keys each limiter tracks; 0: DefaultMaxKeys.
	MaxKeys int
}

// Unlimited is a configuration without any limit (benchmarks, or a
// deployment whose gateway limits requests).
func Unlimited() Config {
	off := Quota{Off: true}
	return Config{Default: off, Token: off, AuthFailures: off}
}

// ClientQuota is the quota of each client of tenantID.
func (c Config) ClientQuota(tenantID string) Quota {
	if q, ok := c.Tenants[strings.ToLower(tenantID)]; ok && !q.IsZero() {
		return q
	}
	return c.DefaultQuota()
}

// DefaultQuota is Default or, unset, DefaultQuota.
func (c Config) DefaultQuota() Quota { return or(c.Default, DefaultQuota) }

// TokenQuota is Token or, unset, DefaultTokenQuota.
func (c Config) TokenQuota() Quota { return or(c.Token, DefaultTokenQuota) }

// AuthFailureQuota is AuthFailures or, unset, DefaultAuthFailureQuota.
func (c Config) AuthFailureQuota() Quota { return or(c.AuthFailures, DefaultAuthFailureQuota) }

func or(q, def Quota) Quota {
	if q.IsZero() {
		return def
	}
	return q
}

// maxWindow bounds a window: longer ones would keep keys in memory for days.
const maxWindow = 24 * time.Hour

// ParseQuota reads a quota written <requests>/<window>: 600/1m, 20/30s,
// 5000/1h, 10/s (a window of one unit may omit the 1). The window is whole
// seconds, at most 24h. "off" is no limit.
func ParseQuota(s string) (Quota, error) {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "off") {
		return Quota{Off: true}, nil
	}
	bad := func(why string) (Quota, error) {
		return Quota{}, fmt.Errorf("rate limit %q: %s", s, why)
	}
	n, w, ok := strings.Cut(s, "/")
	if !ok {
		return bad("want <requests>/<window>, such as 600/1m, or off")
	}
	limit, err := strconv.Atoi(strings.TrimSpace(n))
	if err != nil || limit < 1 || limit > 1_000_000_000 {
		return bad("the number of requests must be a whole number from 1 to 1000000000")
	}
	w = strings.TrimSpace(w)
	if w != "" && (w[0] < '0' || w[0] > '9') {
		w = "1" + w
	}
	window, err := time.ParseDuration(w)
	switch {
	case err != nil:
		return bad("the window must be a duration such as 1s, 30s, 1m or 1h")
	case window < time.Second || window%time.Second != 0:
		return bad("the window must be a whole number of seconds, at least 1s")
	case window > maxWindow:
		return bad("the window must be at most 24h")
	}
	return Quota{Limit: limit, Window: window}, nil
}

// String writes q as ParseQuota reads it.
func (q Quota) String() string {
	switch {
	case q.Off:
		return "off"
	case q.Window%time.Hour == 0 && q.Window > 0:
		return fmt.Sprintf("%d/%dh", q.Limit, q.Window/time.Hour)
	case q.Window%time.Minute == 0 && q.Window > 0:
		return fmt.Sprintf("%d/%dm", q.Limit, q.Window/time.Minute)
	default:
		return fmt.Sprintf("%d/%ds", q.Limit, q.Window/time.Second)
	}
}

// ParseTenantQuotas reads per-tenant quotas: each entry is a comma-separated
// list of <tenant-uuid>=<quota>. A tenant may appear once.
func ParseTenantQuotas(entries []string) (map[string]Quota, error) {
	out := map[string]Quota{}
	for _, entry := range entries {
		for _, item := range strings.Split(entry, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			id, raw, ok := strings.Cut(item, "=")
			if !ok {
				return nil, fmt.Errorf("tenant rate limit %q: want <tenant-uuid>=<requests>/<window>, such as 3f0c…=1200/1m", item)
			}
			u, err := uuid.Parse(strings.TrimSpace(id))
			if err != nil || len(strings.TrimSpace(id)) != 36 {
				return nil, fmt.Errorf("tenant rate limit %q: %q is not a tenant id (a UUID)", item, strings.TrimSpace(id))
			}
			tenant := u.String()
			if _, dup := out[tenant]; dup {
				return nil, fmt.Errorf("tenant rate limit %q: tenant %s is given twice", item, tenant)
			}
			q, err := ParseQuota(raw)
			if err != nil {
				return nil, fmt.Errorf("tenant %s: %w", tenant, err)
			}
			out[tenant] = q
		}
	}
	return out, nil
}
