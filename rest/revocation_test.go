package rest

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// TestTokensStopWithTheirClient: a token stops working when its client is
// revoked or its tenant deactivated, without waiting for it to expire.
func TestTokensStopWithTheirClient(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		for _, tc := range []struct {
			name    string
			disable func(s *scopeServer) error
		}{
			{"client revoked", func(s *scopeServer) error {
				return db.Ent.APIClient.UpdateOneID(s.client.Client.ID).SetRevoked(true).Exec(viewer.SystemContext(context.Background()))
			}},
			{"tenant deactivated", func(s *scopeServer) error {
				off := false
				_, err := s.app.Backoffice.UpdateTenant(viewer.SystemContext(context.Background()), s.tenantID, backoffice.TenantSettings{Active: &off})
				return err
			}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				s := newScopeServer(t, db)
				s.app.Auth.ClientCheckTTL = 0 // look every time
				token := s.tokenFor(t, "customers:read")
				status := func() int {
					req, _ := http.NewRequest(http.MethodGet, s.srv.URL+"/v1/customers", strings.NewReader(""))
					req.Header.Set("Authorization", "Bearer "+token)
					resp, err := http.DefaultClient.Do(req)
					require.NoError(t, err)
					resp.Body.Close()
					return resp.StatusCode
				}
				require.Equal(t, http.StatusOK, status())
				require.NoError(t, tc.disable(s))
				require.Equal(t, http.StatusUnauthorized, status())
			})
		}
	})
}
