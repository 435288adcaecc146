package rest

import (
	"net/http"
	"strings"

	"github.com/fideliza/fideliza/app/backoffice"
)

// CORS (docs/backoffice.md): a back-office web app on another origin may
// call /graphql, /v1 (the webhooks API included), /v2 and the points paths
// with a bearer token. Origins are allowed by the installation
// (Config.CORSOrigins) and by each tenant (its cors_origins setting). No
// cookie or other credential is accepted from a browser there, so the
// answers never carry Access-Control-Allow-Credentials.
//
// A preflight carries no token: it is answered for an origin the
// installation or any tenant allows. The request that follows is
// authenticated, and its answer is readable (Access-Control-Allow-Origin)
// only when the installation or the token's tenant allows the origin; an
// answer given before a token was accepted (a 401) is readable from an
// origin a preflight is answered for, and holds nothing of a tenant.
const (
	corsMethods = "GET, POST, PUT, PATCH, DELETE"
	corsHeaders = "Authorization, Content-Type, Accept, Idempotency-Key, X-Correlation-Id, X-Request-Id"
	// corsExposed are the answers' headers a browser app may read.
	corsExposed = "Location, Retry-After, WWW-Authenticate, RateLimit, RateLimit-Policy, Idempotent-Replayed, X-Request-Id, X-Correlation-Id"
	// corsMaxAge is how long, in seconds, a browser keeps a preflight's answer.
	corsMaxAge = "600"
)

// corsPath says whether a path is one a browser app on another origin may
// call: not the panel, the token endpoint, the playground or the POS paths.
func corsPath(path string) bool {
	return path == "/graphql" || strings.HasPrefix(path, "/v1/") || strings.HasPrefix(path, "/v2/") ||
		strings.HasPrefix(path, "/points/")
}

// cors answers preflights and marks the answers of cross-origin requests
// whose origin is allowed; other origins get no CORS header.
func (s *server) cors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw := r.Header.Get("Origin")
		if raw == "" || !corsPath(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Add("Vary", "Origin")
		origin, err := backoffice.CORSOrigin(raw)
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Add("Vary", "Access-Control-Request-Method")
			h.Add("Vary", "Access-Control-Request-Headers")
			if err == nil && s.originAllowed(r, origin, "") {
				h.Set("Access-Control-Allow-Origin", raw)
				h.Set("Access-Control-Allow-Methods", corsMethods)
				h.Set("Access-Control-Allow-Headers", corsHeaders)
				h.Set("Access-Control-Max-Age", corsMaxAge)
			}
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if err != nil {
			next.ServeHTTP(w, r)
			return
		}
		who, _ := r.Context().Value(principalKey{}).(*principal)
		next.ServeHTTP(&corsWriter{ResponseWriter: w, mark: func() {
			var tenantID string
			if who != nil {
				tenantID = who.v.TenantID
			}
			if s.originAllowed(r, origin, tenantID) {
				h.Set("Access-Control-Allow-Origin", raw)
				h.Set("Access-Control-Expose-Headers", corsExposed)
			}
		}}, r)
	})
}

// originAllowed says whether the installation allows origin, or tenantID
// does (any tenant when tenantID is "").
func (s *server) originAllowed(r *http.Request, origin, tenantID string) bool {
	if s.origins[origin] {
		return true
	}
	tenants, err := s.app.Backoffice.TenantsAllowingOrigin(r.Context(), origin)
	if err != nil {
		s.log.WarnContext(r.Context(), "tenants' CORS origins unread", "request_id", RequestID(r.Context()), "error", err)
		return false
	}
	if tenantID == "" {
		return len(tenants) > 0
	}
	return tenants[tenantID]
}

// corsWriter marks an answer (mark) once, before its header is written:
// by then the route's authentication has named the tenant.
type corsWriter struct {
	http.ResponseWriter
	mark   func()
	marked bool
}

func (w *corsWriter) WriteHeader(status int) {
	if !w.marked {
		w.marked = true
		w.mark()
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *corsWriter) Write(b []byte) (int, error) {
	if !w.marked {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the writer beneath.
func (w *corsWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
