package rest

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// TestForgedClaimsOverHTTP (issue 15, item 5): tokens signed with the
// service's own key whose claims do not hold together (another tenant for
// the client, exp as a string, claims of the wrong JSON type) are 401 on
// GET /v1/customers, whether the client's check is cached or not, and never
// lock the client's genuine tokens out.
func TestForgedClaimsOverHTTP(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := newTestEnv(t, db)
		other, err := e.app.Backoffice.CreateTenant(viewer.SystemContext(context.Background()), "Outra Loja", nil)
		require.NoError(t, err)
		genuine := e.tokenFor(t, "customers:read") // also makes the client
		sign := func(claims map[string]any) string {
			key, err := e.app.Auth.Keys.Signing(context.Background())
			require.NoError(t, err)
			signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key},
				(&jose.SignerOptions{}).WithType(auth.AccessTokenType))
			require.NoError(t, err)
			payload, err := json.Marshal(claims)
			require.NoError(t, err)
			jws, err := signer.Sign(payload)
			require.NoError(t, err)
			raw, err := jws.CompactSerialize()
			require.NoError(t, err)
			return raw
		}
		claims := func(changes map[string]any) map[string]any {
			now := time.Now()
			c := map[string]any{"iss": e.app.Auth.Issuer, "aud": e.app.Auth.Audience, "sub": e.client.Client.ID,
				"exp": now.Add(time.Hour).Unix(), "iat": now.Unix(), "jti": "forged-" + now.Format(time.RFC3339Nano),
				"tenant_id": e.tenantID, "scope": "customers:read"}
			for k, v := range changes {
				c[k] = v
			}
			return c
		}
		status := func(token string) int {
			req, err := http.NewRequest(http.MethodGet, e.srv.URL+"/v1/customers", nil)
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+token)
			res, err := e.srv.Client().Do(req)
			require.NoError(t, err)
			res.Body.Close()
			return res.StatusCode
		}
		otherTenant := sign(claims(map[string]any{"tenant_id": other.ID}))

		// Cold: the forged token first, then the genuine one.
		require.Equal(t, http.StatusUnauthorized, status(otherTenant), "the client's token naming another tenant, cold")
		require.Equal(t, http.StatusOK, status(genuine), "the genuine token after a forged one")
		// Warm: the genuine answer cached does not admit the forged token.
		require.Equal(t, http.StatusUnauthorized, status(otherTenant), "the client's token naming another tenant, warm")

		for _, c := range []struct {
			name    string
			changes map[string]any
			want    int
		}{
			{"exp as a string", map[string]any{"exp": "9999999999"}, http.StatusUnauthorized},
			{"tenant_id as a number", map[string]any{"tenant_id": 7}, http.StatusUnauthorized},
			{"scope as an array", map[string]any{"scope": []string{"customers:read"}}, http.StatusUnauthorized},
			{"sub as a number", map[string]any{"sub": 42}, http.StatusUnauthorized},
			{"the same claims, well typed", nil, http.StatusOK},
		} {
			require.Equal(t, c.want, status(sign(claims(c.changes))), c.name)
		}
		require.Equal(t, http.StatusOK, status(genuine), "the genuine token at the end")
	})
}
