package rest

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/ratelimit"
	"github.com/fideliza/fideliza/viewer"
)

// Rate-limit policies, named in the RateLimit-Policy and RateLimit headers
// (draft-ietf-httpapi-ratelimit-headers-09 and later):
//
//	RateLimit-Policy: "client";q=600;w=60
//	RateLimit: "client";r=599;t=60
//
// q is the quota of requests in a window of w seconds, r what is left of it
// and t the seconds until the window ends. A refused request is answered 429
// with Retry-After (seconds) in the error format of its interface.
const (
	// policyClient counts the requests of an authenticated client (OAuth
	// client, back-office user, POS client), with its tenant's quota.
	policyClient = "client"
	// policyAnonymous counts, per IP address, requests of the bearer paths
	// whose token is missing or invalid.
	policyAnonymous = "anonymous"
	// policyToken counts requests to /auth/token per IP address.
	policyToken = "token"
	// policyAuthFailures counts failed HTTP Basic authentications of the
	// point-of-sale interface per IP address.
	policyAuthFailures = "auth-failures"
)

// limits are the counters of one handler: shared by every process of a
// PostgreSQL database, in this process's memory on SQLite (app.Limiter).
type limits struct {
	cfg ratelimit.Config
	// One counter per policy: keys of different policies never meet.
	clients, anonymous, token, failures ratelimit.Counter
}

func newLimits(a *app.App, cfg ratelimit.Config) *limits {
	l := func(policy string) ratelimit.Counter { return a.Limiter(policy, cfg.Now, cfg.MaxKeys) }
	return &limits{cfg: cfg, clients: l(policyClient), anonymous: l(policyAnonymous), token: l(policyToken),
		failures: l(policyAuthFailures)}
}

// limited is a rate-limit decision of a request and the policy it was made
// under.
type limited struct {
	policy string
	quota  ratelimit.Quota
	ratelimit.Decision
}

// set writes the RateLimit-Policy and RateLimit headers of d, and
// Retry-After when the request is refused. A policy that is off writes
// nothing.
func (d limited) set(w http.ResponseWriter) {
	if d.quota.Off {
		return
	}
	h := w.Header()
	h.Set("RateLimit-Policy", fmt.Sprintf("%q;q=%d;w=%d", d.policy, d.Limit, seconds(d.quota.Window)))
	h.Set("RateLimit", fmt.Sprintf("%q;r=%d;t=%d", d.policy, d.Remaining, seconds(d.Reset)))
	if !d.Allowed {
		h.Set("Retry-After", strconv.Itoa(max(seconds(d.RetryAfter), 1)))
	}
}

// message explains a refusal to the caller.
func (d limited) message() string {
	var what string
	switch d.policy {
	case policyClient:
		what = fmt.Sprintf("this client may make %d requests", d.Limit)
	case policyAnonymous:
		what = fmt.Sprintf("this address may make %d requests without valid credentials", d.Limit)
	case policyToken:
		what = fmt.Sprintf("this address may make %d token requests", d.Limit)
	case policyAuthFailures:
		what = fmt.Sprintf("this address may fail authentication %d times", d.Limit)
	}
	return fmt.Sprintf("rate limit exceeded: %s per %d seconds; retry in %d seconds",
		what, seconds(d.quota.Window), max(seconds(d.RetryAfter), 1))
}

// seconds rounds d up to whole seconds.
func seconds(d time.Duration) int { return int(math.Ceil(d.Seconds())) }

// client counts a request of the authenticated viewer v and writes the
// headers.
func (l *limits) client(w http.ResponseWriter, v viewer.Viewer) limited {
	kind := "user"
	if v.Role == viewer.RoleClient {
		kind = "client"
	}
	q := l.cfg.ClientQuota(v.TenantID)
	d := limited{policyClient, q, l.clients.Allow(v.TenantID+"\x00"+kind+"\x00"+v.Subject, q)}
	d.set(w)
	return d
}

// anonymousRequest counts a request of r's address without valid
// credentials on a bearer path and writes the headers.
func (l *limits) anonymousRequest(w http.ResponseWriter, r *http.Request) limited {
	return byAddress(w, r, policyAnonymous, l.cfg.DefaultQuota(), l.anonymous.Allow)
}

// tokenRequest counts a request to /auth/token of r's address and writes
// the headers.
func (l *limits) tokenRequest(w http.ResponseWriter, r *http.Request) limited {
	return byAddress(w, r, policyToken, l.cfg.TokenQuota(), l.token.Allow)
}

// authFailures says, without counting, whether r's address may still try
// HTTP Basic credentials, and writes the headers.
func (l *limits) authFailures(w http.ResponseWriter, r *http.Request) limited {
	return byAddress(w, r, policyAuthFailures, l.cfg.AuthFailureQuota(), l.failures.Peek)
}

// byAddress decides on a request of r's address under policy with decide
// (a limiter's Allow, or Peek) and writes the headers.
func byAddress(w http.ResponseWriter, r *http.Request, policy string, q ratelimit.Quota,
	decide func(string, ratelimit.Quota) ratelimit.Decision) limited {
	d := limited{policy, q, decide(clientIP(r), q)}
	d.set(w)
	return d
}

// authFailed counts a failed HTTP Basic authentication of r's address and
// writes the headers.
func (l *limits) authFailed(w http.ResponseWriter, r *http.Request) {
	q := l.cfg.AuthFailureQuota()
	d := limited{policyAuthFailures, q, l.failures.Allow(clientIP(r), q)}
	// This request is answered 401 whatever the count: the next ones of
	// the address, once over the quota, are refused before any check.
	d.Allowed, d.RetryAfter = true, 0
	d.set(w)
}

// clientIP is the key of r's address: the peer's IP (X-Forwarded-For is
// not trusted: a client could choose its own key), an IPv6 address reduced
// to its /64, the block one subscriber usually holds.
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap().WithZone("")
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}

// refusal answers 429 in the error format of an interface.
type refusal func(w http.ResponseWriter, r *http.Request, d limited)

// refuseV1 is the 429 of /v1 and /points.
func refuseV1(w http.ResponseWriter, _ *http.Request, d limited) {
	writeJSON(w, http.StatusTooManyRequests, v1Error{Error: "rate_limited", Message: d.message()})
}

// refuseGraphQL is the 429 of /graphql: a GraphQL error with the code.
func refuseGraphQL(w http.ResponseWriter, _ *http.Request, d limited) {
	type extensions struct {
		Code string `json:"code"`
	}
	type gqlError struct { // fields in the order of their names
		Extensions extensions `json:"extensions"`
		Message    string     `json:"message"`
	}
	writeJSON(w, http.StatusTooManyRequests, struct {
		Errors []gqlError `json:"errors"`
	}{[]gqlError{{Extensions: extensions{Code: "rate_limited"}, Message: d.message()}}})
}

// refusePOS is the 429 of the point-of-sale interface, a problem.
func refusePOS(w http.ResponseWriter, r *http.Request, d limited) {
	writeProblem(w, r, http.StatusTooManyRequests, "rate-limited", d.message(), nil)
}

// refuseToken is the 429 of /auth/token, an OAuth error.
func refuseToken(w http.ResponseWriter, _ *http.Request, d limited) {
	writeOAuthError(w, &auth.OAuthError{Status: http.StatusTooManyRequests, Code: "too_many_requests",
		Description: d.message(), RetryAfter: d.RetryAfter})
}

// refusalFor is the refusal of a bearer path.
func refusalFor(pattern string) refusal {
	if pattern == "/graphql" {
		return refuseGraphQL
	}
	return refuseV1
}

// limitClient counts the requests of the authenticated client; it runs
// after authentication.
func (s *server) limitClient(refuse refusal) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			v, _ := viewer.FromContext(r.Context())
			if d := s.limits.client(w, v); !d.Allowed {
				refuse(w, r, d)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}
