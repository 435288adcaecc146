package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/google/uuid"
	"golang.org/x/oauth2"

	"github.com/fideliza/fideliza/viewer"
)

// OIDCConfig is the external OpenID Connect provider whose tokens back-office
// users (dashboards, analysts) sign in with.
type OIDCConfig struct {
	// Issuer is the provider's issuer URL, exactly as its discovery document
	// and its tokens spell it.
	Issuer string
	// Audience must be in the aud of every token.
	Audience string
	// TenantClaim names the claim with the user's tenant id; default "tenant_id".
	TenantClaim string
	// RoleClaim names the claim with the user's role, "admin" or "analyst"
	// (a string, or a list of strings); default "role".
	RoleClaim string
	// ClientID and ClientSecret are this service's client at the provider,
	// for signing users in through the browser (authorization code flow
	// with PKCE; the secret may be empty for a public client). Without a
	// client id, users bring tokens obtained elsewhere.
	ClientID     string
	ClientSecret string
	// HTTPClient fetches the discovery document and the keys; default a
	// client with a 10-second timeout.
	HTTPClient *http.Client
}

const (
	// DefaultOIDCTenantClaim and DefaultOIDCRoleClaim name the claims of an
	// external provider's tokens unless configured otherwise.
	DefaultOIDCTenantClaim = "tenant_id"
	DefaultOIDCRoleClaim   = "role"

	discoveryTimeout = 10 * time.Second
)

// externalAlgs are the algorithms an external provider's tokens may be signed
// with, among those it advertises.
var externalAlgs = []string{oidc.RS256, oidc.ES256}

// external verifies the tokens of the external provider.
type external struct {
	issuer      string
	algs        []string
	verifier    *oidc.IDTokenVerifier
	tenantClaim string
	roleClaim   string
	httpClient  *http.Client
	signIn      *signIn // nil without a client id
}

// clientContext makes oauth2 and go-oidc calls to the provider through the
// configured HTTP client.
func (e *external) clientContext(ctx context.Context) context.Context {
	return oidc.ClientContext(ctx, e.httpClient)
}

// UseOIDC discovers the external provider of cfg (within ctx and at most 10
// seconds) and makes Authenticate accept its tokens too. It fails when the
// provider cannot be reached, its discovery document names another issuer, or
// it signs with none of RS256 and ES256.
func (s *Service) UseOIDC(ctx context.Context, cfg OIDCConfig) error {
	if cfg.TenantClaim == "" {
		cfg.TenantClaim = DefaultOIDCTenantClaim
	}
	if cfg.RoleClaim == "" {
		cfg.RoleClaim = DefaultOIDCRoleClaim
	}
	if cfg.Audience == "" {
		return errors.New("an audience is required: tokens of the provider must name this service in aud")
	}
	if err := checkIssuerURL(cfg.Issuer); err != nil {
		return err
	}
	if strings.TrimRight(cfg.Issuer, "/") == s.Issuer {
		return fmt.Errorf("issuer %q is this service's own issuer", cfg.Issuer)
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: discoveryTimeout}
	}
	ctx, cancel := context.WithTimeout(oidc.ClientContext(ctx, client), discoveryTimeout)
	defer cancel()
	provider, err := oidc.NewProvider(ctx, cfg.Issuer)
	if err != nil {
		return fmt.Errorf("discovering the OpenID provider at %s: %w", cfg.Issuer, err)
	}
	var meta struct {
		JWKSURI string   `json:"jwks_uri"`
		Algs    []string `json:"id_token_signing_alg_values_supported"`
	}
	if err := provider.Claims(&meta); err != nil {
		return fmt.Errorf("reading the discovery document of %s: %w", cfg.Issuer, err)
	}
	if meta.JWKSURI == "" {
		return fmt.Errorf("the discovery document of %s has no jwks_uri", cfg.Issuer)
	}
	var algs []string
	for _, a := range meta.Algs {
		if slices.Contains(externalAlgs, a) && !slices.Contains(algs, a) {
			algs = append(algs, a)
		}
	}
	if len(algs) == 0 {
		return fmt.Errorf("the OpenID provider at %s advertises signing algorithms %v; Fideliza accepts %v",
			cfg.Issuer, meta.Algs, externalAlgs)
	}
	s.external = &external{
		issuer: cfg.Issuer,
		algs:   algs,
		verifier: provider.Verifier(&oidc.Config{
			ClientID:             cfg.Audience,
			SupportedSigningAlgs: algs,
		}),
		tenantClaim: cfg.TenantClaim,
		roleClaim:   cfg.RoleClaim,
		httpClient:  client,
	}
	if cfg.ClientID != "" {
		s.external.signIn = &signIn{oauth2: oauth2.Config{
			ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, Endpoint: provider.Endpoint(),
			RedirectURL: s.Issuer + SignInPath, Scopes: []string{oidc.ScopeOpenID, "profile", "email"},
		}}
	}
	return nil
}

// checkIssuerURL accepts https URLs, and http ones on the loopback interface
// only (a provider in development): keys fetched over plain HTTP elsewhere
// could be replaced on the way.
func checkIssuerURL(issuer string) error {
	u, err := url.Parse(issuer)
	if err != nil || u.Host == "" {
		return fmt.Errorf("issuer %q is not an absolute URL", issuer)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		host := u.Hostname()
		if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
			return nil
		}
		return fmt.Errorf("issuer %q must use https (http is accepted on localhost only)", issuer)
	default:
		return fmt.Errorf("issuer %q must be an https URL", issuer)
	}
}

// authenticate verifies a token of the external provider and maps its
// claims to a back-office viewer.
func (e *external) authenticate(ctx context.Context, raw string, header jwtHeader) (viewer.Viewer, error) {
	// Access tokens (RFC 9068) or ID tokens; never another kind of JWT the
	// provider signs, such as a logout token.
	switch strings.ToLower(header.Type) {
	case "", "jwt", AccessTokenType, "application/" + AccessTokenType:
	default:
		return viewer.Viewer{}, invalidf("token type %q is not accepted", header.Type)
	}
	tok, err := e.verifier.Verify(ctx, raw)
	if err != nil {
		return viewer.Viewer{}, invalidf("%v", err)
	}
	var cl map[string]json.RawMessage
	if err := tok.Claims(&cl); err != nil {
		return viewer.Viewer{}, invalidf("%v", err)
	}
	if err := checkNotBefore(cl["nbf"]); err != nil {
		return viewer.Viewer{}, err
	}
	if tok.Subject == "" {
		return viewer.Viewer{}, invalidf("no sub")
	}
	var tenantID string
	if err := json.Unmarshal(cl[e.tenantClaim], &tenantID); err != nil || tenantID == "" {
		return viewer.Viewer{}, invalidf("no %s claim", e.tenantClaim)
	}
	if u, err := uuid.Parse(tenantID); err != nil || u.String() != tenantID {
		return viewer.Viewer{}, invalidf("%s %q is not a tenant id", e.tenantClaim, tenantID)
	}
	role, err := backOfficeRole(cl[e.roleClaim])
	if err != nil {
		return viewer.Viewer{}, invalidf("%s claim: %v", e.roleClaim, err)
	}
	return viewer.Viewer{
		Role:     role,
		TenantID: tenantID,
		Subject:  tok.Subject,
		Scopes:   RoleScopes(role),
	}, nil
}

// backOfficeRole reads a role claim: "admin" or "analyst", or a list of roles
// of which the strongest known one counts.
func backOfficeRole(raw json.RawMessage) (viewer.Role, error) {
	if len(raw) == 0 {
		return "", errors.New("missing")
	}
	var roles []string
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		roles = []string{one}
	} else if err := json.Unmarshal(raw, &roles); err != nil {
		return "", errors.New("not a string or a list of strings")
	}
	switch {
	case slices.Contains(roles, string(viewer.RoleAdmin)):
		return viewer.RoleAdmin, nil
	case slices.Contains(roles, string(viewer.RoleAnalyst)):
		return viewer.RoleAnalyst, nil
	}
	return "", fmt.Errorf("%q grants no access (want admin or analyst)", roles)
}

// RoleScopes returns the scopes of a back-office role: every scope for
// admin, the read scopes for analyst.
func RoleScopes(role viewer.Role) []string {
	switch role {
	case viewer.RoleAdmin:
		return slices.Clone(Scopes)
	case viewer.RoleAnalyst:
		var read []string
		for _, s := range Scopes {
			if strings.HasSuffix(s, ":read") && s != "privacy:read" { // an unmasked export is not an analyst's
				read = append(read, s)
			}
		}
		return read
	case viewer.RoleSystem, viewer.RoleClient: // not back-office roles
	}
	return nil
}
