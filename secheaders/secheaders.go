// Package secheaders sets the security headers of the service's own web
// pages (the OpenAPI reference, the GraphQL playground, the developer panel):
// one implementation, each page naming only its Content-Security-Policy and
// what it needs differently.
package secheaders

import "net/http"

// Policy is what a page sends besides X-Content-Type-Options: nosniff, which
// every page sends.
type Policy struct {
	// CSP is the page's Content-Security-Policy.
	CSP string
	// Referrer is the Referrer-Policy; "" sends no-referrer.
	Referrer string
	// DenyFraming adds X-Frame-Options: DENY for browsers that do not
	// read frame-ancestors.
	DenyFraming bool
}

// Middleware returns a handler that sets p's headers, then calls next.
func (p Policy) Middleware(next http.Handler) http.Handler {
	referrer := p.Referrer
	if referrer == "" {
		referrer = "no-referrer"
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", p.CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		if p.DenyFraming {
			h.Set("X-Frame-Options", "DENY")
		}
		h.Set("Referrer-Policy", referrer)
		next.ServeHTTP(w, r)
	})
}
