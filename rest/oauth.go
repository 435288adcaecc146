package rest

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/fideliza/fideliza/auth"
)

// token is POST /auth/token: the client credentials grant, with the client
// authenticated by form fields or HTTP Basic.
func (s *server) token(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	if d := s.limits.tokenRequest(w, r); !d.Allowed {
		refuseToken(w, r, d)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		writeOAuthError(w, &auth.OAuthError{Status: http.StatusBadRequest, Code: "invalid_request", Description: "body must be application/x-www-form-urlencoded"})
		return
	}
	for _, name := range []string{"grant_type", "client_id", "client_secret", "scope"} {
		if len(r.PostForm[name]) > 1 { // RFC 6749 §3.2: no parameter twice
			writeOAuthError(w, &auth.OAuthError{Status: http.StatusBadRequest, Code: "invalid_request", Description: name + " is sent more than once"})
			return
		}
	}
	req := auth.TokenRequest{
		GrantType:    r.PostForm.Get("grant_type"),
		ClientID:     r.PostForm.Get("client_id"),
		ClientSecret: r.PostForm.Get("client_secret"),
		Scope:        r.PostForm.Get("scope"),
	}
	if id, secret, ok := r.BasicAuth(); ok {
		// RFC 6749 §2.3.1: one authentication method per request, and the
		// Basic credentials are form-encoded before base64.
		if req.ClientSecret != "" || (req.ClientID != "" && req.ClientID != formUnescape(id)) {
			writeOAuthError(w, &auth.OAuthError{Status: http.StatusBadRequest, Code: "invalid_request", Description: "use one client authentication method: HTTP Basic or form fields"})
			return
		}
		req.ClientID, req.ClientSecret = formUnescape(id), formUnescape(secret)
	}
	tok, err := s.app.Auth.IssueToken(r.Context(), req)
	if err != nil {
		var oe *auth.OAuthError
		if !errors.As(err, &oe) {
			s.log.ErrorContext(r.Context(), "issuing token", "request_id", RequestID(r.Context()), "error", err)
		}
		writeOAuthError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, tokenJSON{AccessToken: tok.AccessToken, TokenType: "Bearer", ExpiresIn: tok.ExpiresIn, Scope: tok.Scope})
}

// tokenJSON is the answer of /auth/token (RFC 6749 §5.1); its fields are in
// the order of their names.
type tokenJSON struct {
	AccessToken string `json:"access_token"`
	ExpiresIn   int    `json:"expires_in"`
	Scope       string `json:"scope"`
	TokenType   string `json:"token_type"`
}

// oauthErrorJSON is an error of the token endpoint (RFC 6749 §5.2) and of
// bearer authentication (RFC 6750 §3).
type oauthErrorJSON struct {
	Error            string `json:"error"`
	ErrorDescription string `json:"error_description"`
}

// formUnescape decodes a form-encoded Basic credential; a value that is not
// valid form encoding is taken as it is.
func formUnescape(s string) string {
	if u, err := url.QueryUnescape(s); err == nil {
		return u
	}
	return s
}

func writeOAuthError(w http.ResponseWriter, err error) {
	var oe *auth.OAuthError
	if !errors.As(err, &oe) {
		oe = &auth.OAuthError{Status: http.StatusInternalServerError, Code: "server_error", Description: "the token could not be issued"}
	}
	switch oe.Status {
	case http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", `Basic realm="fideliza"`)
	case http.StatusTooManyRequests:
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(oe.RetryAfter.Seconds()))))
	}
	writeJSON(w, oe.Status, oauthErrorJSON{Error: oe.Code, ErrorDescription: oauthText(oe.Description)})
}

// oauthText keeps an error_description within the characters RFC 6749
// §5.2 allows (printable ASCII without " and \): double quotes become
// single ones, anything else outside the set a question mark.
func oauthText(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '"':
			return '\''
		case r == '\\' || r < 0x20 || r > 0x7e:
			return '?'
		}
		return r
	}, s)
}

// discovery is /.well-known/openid-configuration: where the keys are, so any
// OIDC library can verify our tokens.
func (s *server) discovery(w http.ResponseWriter, r *http.Request) {
	iss := s.app.Auth.Issuer
	writeJSON(w, http.StatusOK, discoveryJSON{
		Issuer:             iss,
		JWKSURI:            iss + "/.well-known/jwks.json",
		TokenEndpoint:      iss + "/auth/token",
		GrantTypes:         []string{"client_credentials"},
		TokenEndpointAuth:  []string{"client_secret_basic", "client_secret_post"},
		IDTokenSigningAlgs: []string{"ES256"},
		ResponseTypes:      []string{"token"},
		SubjectTypes:       []string{"public"},
		Scopes:             auth.Scopes,
	})
}

// discoveryJSON is the OpenID Provider metadata; its fields are in the
// order of their names.
type discoveryJSON struct {
	GrantTypes         []string `json:"grant_types_supported"`
	IDTokenSigningAlgs []string `json:"id_token_signing_alg_values_supported"`
	Issuer             string   `json:"issuer"`
	JWKSURI            string   `json:"jwks_uri"`
	ResponseTypes      []string `json:"response_types_supported"`
	Scopes             []string `json:"scopes_supported"`
	SubjectTypes       []string `json:"subject_types_supported"`
	TokenEndpoint      string   `json:"token_endpoint"`
	TokenEndpointAuth  []string `json:"token_endpoint_auth_methods_supported"`
}

// jwks publishes the public keys only.
func (s *server) jwks(w http.ResponseWriter, r *http.Request) {
	set, err := s.app.Auth.Keys.Public(r.Context())
	if err != nil {
		s.log.ErrorContext(r.Context(), "loading keys", "error", err)
		writeJSON(w, http.StatusServiceUnavailable, v1Error{Error: "unavailable"})
		return
	}
	w.Header().Set("Cache-Control", fmt.Sprintf("public, max-age=%d", int(auth.JWKSMaxAge.Seconds())))
	writeJSON(w, http.StatusOK, set)
}

// bearer authenticates /v1, /points and GraphQL requests (RFC 6750). A
// request without a valid token counts against its address's quota, and is
// refused 429 by refuse over it rather than 401.
func (s *server) bearer(refuse refusal) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			scheme, raw, _ := strings.Cut(r.Header.Get("Authorization"), " ")
			if !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(raw) == "" {
				if d := s.limits.anonymousRequest(w, r); !d.Allowed {
					refuse(w, r, d)
					return
				}
				// RFC 6750 §3.1: no error code in the challenge of a
				// request without credentials.
				w.Header().Set("WWW-Authenticate", `Bearer realm="fideliza"`)
				writeJSON(w, http.StatusUnauthorized, oauthErrorJSON{Error: "invalid_token", ErrorDescription: "a bearer token is required"})
				return
			}
			v, err := s.app.Auth.Authenticate(r.Context(), strings.TrimSpace(raw))
			if err != nil {
				s.log.InfoContext(r.Context(), "token refused", "request_id", RequestID(r.Context()), "reason", err.Error())
				if d := s.limits.anonymousRequest(w, r); !d.Allowed {
					refuse(w, r, d)
					return
				}
				unauthorized(w, "the access token is invalid or expired")
				return
			}
			next.ServeHTTP(w, withViewer(r, v))
		})
	}
}

func unauthorized(w http.ResponseWriter, description string) {
	description = oauthText(description)
	w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="fideliza", error="invalid_token", error_description="%s"`, description))
	writeJSON(w, http.StatusUnauthorized, oauthErrorJSON{Error: "invalid_token", ErrorDescription: description})
}
