package auth

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// TestPOSLoginsRemembered: a successful point-of-sale login is remembered
// for ClientCheckTTL (a revocation takes effect when it ends), and only for
// the same client, secret and tenant; failures are never remembered.
func TestPOSLoginsRemembered(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		ctx := context.Background()
		sys := viewer.SystemContext(ctx)
		s := NewService(db.Ent, "http://127.0.0.1:8080", "fideliza")
		s.ClientCheckTTL = 200 * time.Millisecond
		tn := db.Ent.Tenant.Create().SetName("Loja").SaveX(sys)
		other := db.Ent.Tenant.Create().SetName("Outra").SaveX(sys)
		secret, hash := NewSecret()
		c := db.Ent.APIClient.Create().SetTenantID(tn.ID).SetKind(apiclient.KindPos).SetName("pdv").SetSecretHash(hash).SaveX(sys)

		_, err := s.AuthenticatePOS(ctx, tn.ID, c.ID, secret+"x")
		require.ErrorIs(t, err, ErrPOSUnauthorized)
		v, err := s.AuthenticatePOS(ctx, tn.ID, c.ID, secret)
		require.NoError(t, err)
		require.Equal(t, viewer.Viewer{Role: viewer.RoleClient, TenantID: tn.ID, Subject: c.ID, Scopes: []string{ScopePOS}}, v)

		db.Ent.APIClient.UpdateOneID(c.ID).SetRevoked(true).ExecX(sys)
		refused := []struct{ name, tenantID, secret string }{
			{"another secret", tn.ID, secret + "x"},
			{"another tenant", other.ID, secret},
		}
		for _, r := range refused {
			_, err := s.AuthenticatePOS(ctx, r.tenantID, c.ID, r.secret)
			require.ErrorIs(t, err, ErrPOSUnauthorized, r.name)
		}
		_, err = s.AuthenticatePOS(ctx, tn.ID, c.ID, secret)
		require.NoError(t, err, "remembered until the TTL ends")
		require.Eventually(t, func() bool {
			_, err := s.AuthenticatePOS(ctx, tn.ID, c.ID, secret)
			return errors.Is(err, ErrPOSUnauthorized)
		}, 5*time.Second, 50*time.Millisecond, "revoked once the TTL ended")

		// Forget makes a change take effect at once, by client or by tenant.
		s.ClientCheckTTL = time.Hour
		for _, forget := range []struct{ name, tenantID, clientID string }{
			{"client", "", "the client"},
			{"tenant", tn.ID, ""},
		} {
			secret, hash := NewSecret()
			c := db.Ent.APIClient.Create().SetTenantID(tn.ID).SetKind(apiclient.KindPos).SetName("pdv").SetSecretHash(hash).SaveX(sys)
			_, err := s.AuthenticatePOS(ctx, tn.ID, c.ID, secret)
			require.NoError(t, err)
			db.Ent.APIClient.UpdateOneID(c.ID).SetRevoked(true).ExecX(sys)
			_, err = s.AuthenticatePOS(ctx, tn.ID, c.ID, secret)
			require.NoError(t, err, "remembered")
			clientID := forget.clientID
			if clientID != "" {
				clientID = c.ID
			}
			s.Forget(forget.tenantID, clientID)
			_, err = s.AuthenticatePOS(ctx, tn.ID, c.ID, secret)
			require.ErrorIs(t, err, ErrPOSUnauthorized, forget.name)
		}
	})
}
