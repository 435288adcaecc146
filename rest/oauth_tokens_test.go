package rest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/app/privacy"
	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/auth/authtest"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/rest"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

func TestTokenEndpointErrors(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newFixture(t, db, manyTokenRequests)
		all := f.client(t, apiclient.KindOauth)
		narrow := f.client(t, apiclient.KindOauth, "customers:read")
		victim := f.client(t, apiclient.KindOauth)
		revoked := f.client(t, apiclient.KindOauth)
		require.NoError(t, db.Ent.APIClient.UpdateOneID(revoked.Client.ID).SetRevoked(true).Exec(sys()))
		pos := f.client(t, apiclient.KindPos)
		inactive, err := f.app.Backoffice.CreateTenant(sys(), "Loja Fechada", nil)
		require.NoError(t, err)
		ofInactive := f.clientOf(t, inactive.ID, apiclient.KindOauth)
		off := false
		_, err = f.app.Backoffice.UpdateTenant(sys(), inactive.ID, backoffice.TenantSettings{Active: &off})
		require.NoError(t, err)

		cc := url.Values{"grant_type": {"client_credentials"}}
		withScope := func(s string) url.Values { return url.Values{"grant_type": {"client_credentials"}, "scope": {s}} }
		basic := func(c *backoffice.ClientCredentials) []string { return []string{c.Client.ID, c.Secret} }
		cases := []struct {
			name       string
			form       url.Values
			basic      []string
			wantStatus int
			wantError  string // "" for success
			wantScope  string
			sameAsAuth bool // body must equal every other invalid_client body
		}{
			{"wrong grant_type", url.Values{"grant_type": {"password"}}, basic(all), 400, "unsupported_grant_type", "", false},
			{"missing grant_type", url.Values{}, basic(all), 400, "invalid_request", "", false},
			{"unknown client", cc, []string{"cli_01jdunknown0000000000000000", all.Secret}, 401, "invalid_client", "", true},
			{"wrong secret", cc, []string{victim.Client.ID, all.Secret}, 401, "invalid_client", "", true},
			{"revoked client", cc, basic(revoked), 401, "invalid_client", "", true},
			{"POS client", cc, basic(pos), 401, "invalid_client", "", true},
			{"client of an inactive tenant", cc, basic(ofInactive), 401, "invalid_client", "", true},
			{"no client authentication", cc, nil, 401, "invalid_client", "", true},
			{"secret without id in the form", url.Values{"grant_type": {"client_credentials"}, "client_secret": {all.Secret}}, nil, 401, "invalid_client", "", true},
			{"two authentication methods", url.Values{"grant_type": {"client_credentials"}, "client_id": {all.Client.ID}, "client_secret": {all.Secret}}, basic(all), 400, "invalid_request", "", false},
			{"scope not allowed", withScope("customers:read campaigns:write"), basic(narrow), 400, "invalid_scope", "", false},
			{"unknown scope", withScope("admin"), basic(all), 400, "invalid_scope", "", false},
			{"scope omitted: every allowed scope", cc, basic(all), 200, "", strings.Join(auth.Scopes, " "), false},
			{"scope omitted, narrow client", cc, basic(narrow), 200, "", "customers:read", false},
			{"scope narrowed", withScope("loyalty:read customers:read"), basic(all), 200, "", "loyalty:read customers:read", false},
			{"scope repeated", withScope("customers:read  customers:read"), basic(all), 200, "", "customers:read", false},
			{"client_secret_post", url.Values{"grant_type": {"client_credentials"}, "client_id": {all.Client.ID}, "client_secret": {all.Secret}, "scope": {"campaigns:read"}}, nil, 200, "", "campaigns:read", false},
		}
		var invalidClient []byte
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				res := f.requestToken(t, tc.form, tc.basic...)
				require.Equal(t, tc.wantStatus, res.status, "%s", res.body)
				require.Equal(t, "no-store", res.header.Get("Cache-Control"))
				require.Equal(t, "application/json", res.header.Get("Content-Type"))
				body := res.json(t)
				require.NotContains(t, body, "refresh_token")
				if tc.wantError != "" {
					require.Equal(t, tc.wantError, body["error"])
					require.NotEmpty(t, body["error_description"])
					require.NotContains(t, body, "access_token")
					if tc.sameAsAuth {
						if invalidClient == nil {
							invalidClient = res.body
						}
						require.Equal(t, string(invalidClient), string(res.body), "invalid_client answers must not tell the cases apart")
						require.Equal(t, `Basic realm="fideliza"`, res.header.Get("WWW-Authenticate"))
					}
					return
				}
				require.Equal(t, "Bearer", body["token_type"])
				require.EqualValues(t, auth.TokenLifetime.Seconds(), body["expires_in"])
				require.Equal(t, tc.wantScope, body["scope"])
				v, err := f.app.Auth.Authenticate(context.Background(), body["access_token"].(string))
				require.NoError(t, err)
				require.Equal(t, strings.Fields(tc.wantScope), v.Scopes)
				require.Equal(t, viewer.RoleClient, v.Role)
				require.Equal(t, f.tenantID, v.TenantID)
			})
		}

		t.Run("throttled per client id after five failures", func(t *testing.T) {
			locked := f.client(t, apiclient.KindOauth)
			bystander := f.client(t, apiclient.KindOauth)
			for i := range 5 {
				res := f.requestToken(t, cc, locked.Client.ID, "fzs_wrong")
				require.Equal(t, http.StatusUnauthorized, res.status, "attempt %d", i+1)
			}
			for _, secret := range []string{locked.Secret, "fzs_wrong"} {
				res := f.requestToken(t, cc, locked.Client.ID, secret)
				require.Equal(t, http.StatusTooManyRequests, res.status, "even the right secret is refused")
				retry, err := strconv.Atoi(res.header.Get("Retry-After"))
				require.NoError(t, err)
				require.Greater(t, retry, 0)
				require.Equal(t, "no-store", res.header.Get("Cache-Control"))
				require.NotContains(t, res.json(t), "access_token")
			}
			// Another client, also authenticating by form, is not affected.
			res := f.requestToken(t, url.Values{"grant_type": {"client_credentials"},
				"client_id": {bystander.Client.ID}, "client_secret": {bystander.Secret}})
			require.Equal(t, http.StatusOK, res.status, "%s", res.body)
		})
	})
}

// TestExternalOIDCProvider signs in back-office users through a fake
// external OpenID provider.
func TestExternalOIDCProvider(t *testing.T) {
	t.Parallel()
	const backOffice = "fideliza-backoffice"
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		idp := authtest.NewProvider(t)
		f := newFixture(t, db, func(a *rest.ServerSetup) {
			require.NoError(t, a.Auth.UseOIDC(ctx, auth.OIDCConfig{Issuer: idp.URL, Audience: backOffice}))
		})
		otherTenant, err := f.app.Backoffice.CreateTenant(sys(), "Outra Loja", nil)
		require.NoError(t, err)

		now := time.Now()
		claims := func(change ...any) map[string]any {
			m := map[string]any{
				"iss": idp.URL, "sub": "ana@loja.example", "aud": backOffice,
				"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
				"tenant_id": f.tenantID, "role": "analyst",
			}
			for i := 0; i < len(change); i += 2 {
				if change[i+1] == nil {
					delete(m, change[i].(string))
				} else {
					m[change[i].(string)] = change[i+1]
				}
			}
			return m
		}
		ours, err := f.app.Auth.Keys.Signing(ctx)
		require.NoError(t, err)

		const createCustomer = `mutation { createCustomer(input: {name: "Bia Lima", email: "bia@loja.example", cpf: "529.982.247-25"}) { id } }`
		// One customer in the tenant, none in the other; the admin adds
		// a second, which the analysts then count.
		_, err = db.Ent.Customer.Create().SetTenantID(f.tenantID).SetName("Ana Souza").SetDocument("11144477735").Save(sys())
		require.NoError(t, err)
		cases := []struct {
			name       string
			token      string
			wantRole   viewer.Role // "" means refused
			wantCount  int
			mayMutate  bool
			wantTenant string
		}{
			{"admin", idp.Sign(t, claims("role", "admin")), viewer.RoleAdmin, 1, true, f.tenantID},
			{"analyst", idp.Sign(t, claims()), viewer.RoleAnalyst, 2, false, f.tenantID},
			{"analyst in a role list", idp.Sign(t, claims("role", []string{"employee", "analyst"})), viewer.RoleAnalyst, 2, false, f.tenantID},
			{"analyst of another tenant sees only that tenant", idp.Sign(t, claims("tenant_id", otherTenant.ID)), viewer.RoleAnalyst, 0, false, otherTenant.ID},
			{"wrong audience", idp.Sign(t, claims("aud", testAudience)), "", 0, false, ""},
			{"no tenant claim", idp.Sign(t, claims("tenant_id", nil)), "", 0, false, ""},
			{"unknown role", idp.Sign(t, claims("role", "owner")), "", 0, false, ""},
			{"no role", idp.Sign(t, claims("role", nil)), "", 0, false, ""},
			{"expired", idp.Sign(t, claims("exp", now.Add(-time.Minute).Unix())), "", 0, false, ""},
			{"ES256 (not advertised) signed by our own key", authtest.Sign(t, jose.ES256, ours.Key, map[string]any{"kid": ours.KeyID, "typ": "JWT"}, claims("role", "admin")), "", 0, false, ""},
			{"HS256 keyed with the provider's kid", authtest.Sign(t, jose.HS256, []byte("0123456789abcdef0123456789abcdef"), map[string]any{"kid": idp.KeyID}, claims("role", "admin")), "", 0, false, ""},
			{"our issuer's claims signed by the provider", idp.Sign(t, claims("iss", f.issuer, "aud", testAudience, "role", "admin")), "", 0, false, ""},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				res := f.graphql(t, nil, http.MethodPost, tc.token)
				v, err := f.app.Auth.Authenticate(ctx, tc.token)
				if tc.wantRole == "" {
					requireInvalidToken(t, res)
					require.ErrorIs(t, err, auth.ErrInvalidToken)
					return
				}
				require.NoError(t, err)
				require.Equal(t, tc.wantCount, requireCount(t, res))
				require.Equal(t, tc.wantRole, v.Role)
				require.Equal(t, tc.wantTenant, v.TenantID)
				require.Equal(t, "ana@loja.example", v.Subject)
				require.Equal(t, auth.RoleScopes(tc.wantRole), v.Scopes)
				for _, s := range auth.Scopes {
					// Analysts read all but the unmasked export.
					require.Equal(t, tc.wantRole == viewer.RoleAdmin || strings.HasSuffix(s, ":read") && s != privacy.ScopePrivacyRead, v.HasScope(s), s)
				}

				// A GraphQL mutation: the admin's runs, an analyst's is
				// refused before it runs.
				res = f.graphqlQuery(t, nil, http.MethodPost, tc.token, createCustomer)
				require.Equal(t, http.StatusOK, res.status, "%s", res.body)
				var out struct {
					Errors []struct {
						Extensions struct{ Code string }
					}
				}
				require.NoError(t, json.Unmarshal(res.body, &out))
				if tc.mayMutate {
					require.Empty(t, out.Errors, "%s", res.body)
					require.Equal(t, tc.wantCount+1, requireCount(t, f.graphql(t, nil, http.MethodGet, tc.token)))
				} else {
					require.Len(t, out.Errors, 1, "%s", res.body)
					require.Equal(t, "insufficient_scope", out.Errors[0].Extensions.Code)
					require.Equal(t, tc.wantCount, requireCount(t, f.graphql(t, nil, http.MethodGet, tc.token)), "nothing was created")
				}

				// Below the scopes and the operations' own checks, the role
				// itself: the data layer refuses any change by an analyst.
				name := "Renamed by " + string(v.Role)
				_, err = f.app.DB.Ent.Tenant.UpdateOneID(v.TenantID).SetName(name).Save(viewer.NewContext(ctx, v))
				if tc.mayMutate {
					require.NoError(t, err)
				} else {
					require.ErrorContains(t, err, "may only read")
				}
			})
		}
	})
}

// TestJWKSWithoutKeysIsAnArray: a JWK Set's keys are an array (RFC 7517
// §5), empty on a database no key has been made in yet, never null.
func TestJWKSWithoutKeysIsAnArray(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newFixture(t, db)
		res := do(t, http.DefaultClient, mustGet(t, f.srv.URL+"/.well-known/jwks.json"))
		require.Equal(t, http.StatusOK, res.status)
		require.JSONEq(t, `{"keys":[]}`, string(res.body))
	})
}
