package auth

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// TestSignedTokensWithForgedClaims: tokens signed with the service's own key
// whose claims do not hold together are refused, and never disturb the
// answer for the client's genuine tokens (the check cache is keyed by all
// it compares), cold or warm.
func TestSignedTokensWithForgedClaims(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		sys := viewer.SystemContext(ctx)
		a := db.Ent.Tenant.Create().SetName("A").SaveX(sys)
		b := db.Ent.Tenant.Create().SetName("B").SaveX(sys)
		secret, hash := NewSecret()
		c := db.Ent.APIClient.Create().SetTenantID(a.ID).SetKind(apiclient.KindOauth).SetName("api").SetSecretHash(hash).SaveX(sys)
		s := NewService(db.Ent, "http://127.0.0.1:8080", "fideliza")
		genuine := func() string {
			tok, err := s.IssueToken(ctx, TokenRequest{GrantType: "client_credentials", ClientID: c.ID, ClientSecret: secret})
			require.NoError(t, err)
			return tok.AccessToken
		}
		now := time.Now()
		base := claims{Issuer: s.Issuer, Audience: s.Audience, Subject: c.ID, Expiry: now.Add(time.Hour).Unix(),
			IssuedAt: now.Unix(), ID: randomID(), Scope: "customers:read"}
		sign := func(cl any) string {
			raw, err := s.sign(ctx, cl)
			require.NoError(t, err)
			return raw
		}
		otherTenant := base
		otherTenant.TenantID = b.ID

		// Cold: the forged token first must not make the genuine ones fail.
		_, err := s.Authenticate(ctx, sign(otherTenant))
		require.ErrorIs(t, err, ErrInvalidToken, "a token of the client naming another tenant")
		_, err = s.Authenticate(ctx, genuine())
		require.NoError(t, err, "the client's own tokens still work")
		// Warm: the genuine answer cached must not admit the forged token.
		_, err = s.Authenticate(ctx, sign(otherTenant))
		require.ErrorIs(t, err, ErrInvalidToken)

		type stringExpiry struct {
			claims
			Expiry string `json:"exp"`
		}
		own := base
		own.TenantID = a.ID
		for name, cl := range map[string]any{
			"exp as a string":   stringExpiry{claims: own, Expiry: "9999999999"},
			"tenant_id number":  map[string]any{"iss": s.Issuer, "aud": s.Audience, "sub": c.ID, "exp": own.Expiry, "tenant_id": 7},
			"scope as an array": map[string]any{"iss": s.Issuer, "aud": s.Audience, "sub": c.ID, "exp": own.Expiry, "tenant_id": a.ID, "scope": []string{"x"}},
		} {
			_, err := s.Authenticate(ctx, sign(cl))
			require.ErrorIs(t, err, ErrInvalidToken, name)
		}
		_, err = s.Authenticate(ctx, sign(own))
		require.NoError(t, err, "the same claims with a numeric exp are good")
	})
}
