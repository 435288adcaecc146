package auth

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// TestUserTokens: an operator-issued token signs in a back-office user with
// its role; bad requests are refused at issue, and a token stops working when
// its tenant is deactivated or its claims are not a user's.
func TestUserTokens(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		sys := viewer.SystemContext(ctx)
		s := NewService(db.Ent, "http://127.0.0.1:8080", "fideliza")
		s.ClientCheckTTL = 0
		tn, err := db.Ent.Tenant.Create().SetName("Loja").Save(sys)
		require.NoError(t, err)

		for _, role := range []viewer.Role{viewer.RoleAdmin, viewer.RoleAnalyst} {
			tok, err := s.IssueUserToken(ctx, tn.ID, role, "ana", time.Hour)
			require.NoError(t, err)
			v, err := s.Authenticate(ctx, tok)
			require.NoError(t, err)
			require.Equal(t, viewer.Viewer{Role: role, TenantID: tn.ID, Subject: "user:ana", Scopes: RoleScopes(role)}, v)
		}

		refused := []struct {
			name     string
			tenantID string
			role     viewer.Role
			subject  string
			ttl      time.Duration
		}{
			{"a client role", tn.ID, viewer.RoleClient, "ana", time.Hour},
			{"the system role", tn.ID, viewer.RoleSystem, "ana", time.Hour},
			{"no subject", tn.ID, viewer.RoleAdmin, "", time.Hour},
			{"too long", tn.ID, viewer.RoleAdmin, "ana", LongestTokenLifetime + time.Second},
			{"no lifetime", tn.ID, viewer.RoleAdmin, "ana", 0},
			{"an unknown tenant", "00000000-0000-4000-8000-000000000000", viewer.RoleAdmin, "ana", time.Hour},
		}
		for _, tc := range refused {
			_, err := s.IssueUserToken(ctx, tc.tenantID, tc.role, tc.subject, tc.ttl)
			require.Error(t, err, tc.name)
		}

		// A forged role or a client subject with a role claim, signed with
		// our own key, is still no user.
		now := time.Now()
		base := claims{Issuer: s.Issuer, Audience: s.Audience, Expiry: now.Add(time.Hour).Unix(), IssuedAt: now.Unix(),
			ID: randomID(), TenantID: tn.ID}
		for name, cl := range map[string]userClaims{
			"role owner":           {claims: withSubject(base, "user:ana"), Role: "owner"},
			"role system":          {claims: withSubject(base, "user:ana"), Role: "system"},
			"a client with a role": {claims: withSubject(base, "cli_01jd0000000000000000000000"), Role: "admin"},
		} {
			raw, err := s.sign(ctx, cl)
			require.NoError(t, err)
			_, err = s.Authenticate(ctx, raw)
			require.Error(t, err, name)
		}

		tok, err := s.IssueUserToken(ctx, tn.ID, viewer.RoleAdmin, "ana", time.Hour)
		require.NoError(t, err)
		require.NoError(t, db.Ent.Tenant.UpdateOneID(tn.ID).SetActive(false).Exec(sys))
		_, err = s.Authenticate(ctx, tok)
		require.Error(t, err, "a deactivated tenant's users are signed out")
	})
}

func withSubject(c claims, sub string) claims {
	c.Subject = sub
	return c
}
