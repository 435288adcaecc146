package rest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/ratelimit"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// TestPOSTenantChecks walks every point-of-sale route through the checks
// in their order (docs/decisions.md): tenantId not a UUID 400; credentials
// not genuine 401; genuine credentials on the path of a tenant that does not
// exist 404; credentials of another tenant 401; tenant inactive 404. The
// body is checked after them all: every request here sends an empty one.
func TestPOSTenantChecks(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db, func(a *ServerSetup) { a.RateLimits.AuthFailures = ratelimit.Quota{Off: true} })
		other, err := e.app.Backoffice.CreateTenant(posSys(), "Outra Rede", nil)
		require.NoError(t, err)
		otherPOS, err := e.app.Backoffice.CreateClient(posSys(), other.ID, apiclient.KindPos, "caixa da outra", nil)
		require.NoError(t, err)
		closed, err := e.app.Backoffice.CreateTenant(posSys(), "Rede Fechada", nil)
		require.NoError(t, err)
		closedPOS, err := e.app.Backoffice.CreateClient(posSys(), closed.ID, apiclient.KindPos, "caixa da fechada", nil)
		require.NoError(t, err)
		_, err = e.app.Backoffice.UpdateTenant(posSys(), closed.ID, backoffice.TenantSettings{Active: posBool(false)})
		require.NoError(t, err)

		const unknown = "9b2f5a3e-0c1d-4e7f-8a9b-0c1d2e3f4a5b" // well formed, no such tenant
		ours := &[2]string{e.clientID, e.secret}
		wrong := &[2]string{e.clientID, e.secret + "x"}
		closedCreds := &[2]string{closedPOS.Client.ID, closedPOS.Secret}
		cases := []struct {
			name, tenant string
			creds        *[2]string // nil: none
			status       int
			problem      string
		}{
			{"tenantId not a UUID, no credentials", "not-a-uuid", nil, http.StatusBadRequest, "validation-error"},
			{"unknown tenant, no credentials", unknown, nil, http.StatusUnauthorized, "unauthorized"},
			{"unknown tenant, wrong secret", unknown, wrong, http.StatusUnauthorized, "unauthorized"},
			{"unknown tenant, genuine credentials", unknown, ours, http.StatusNotFound, "tenant-not-found"},
			{"another tenant, genuine credentials of this one", other.ID, ours, http.StatusUnauthorized, "unauthorized"},
			{"inactive tenant, credentials of another", closed.ID, ours, http.StatusUnauthorized, "unauthorized"},
			{"inactive tenant, wrong secret", closed.ID, &[2]string{closedPOS.Client.ID, "wrong"}, http.StatusUnauthorized, "unauthorized"},
			{"inactive tenant, its credentials", closed.ID, closedCreds, http.StatusNotFound, "tenant-not-found"},
			{"unknown tenant, credentials of an inactive tenant", unknown, closedCreds, http.StatusNotFound, "tenant-not-found"},
			{"the other tenant, its credentials: past the checks", other.ID, &[2]string{otherPOS.Client.ID, otherPOS.Secret}, http.StatusBadRequest, "validation-error"},
		}
		for _, rt := range routeTable.posRouteTable() {
			q := posReq{method: rt.method, path: strings.NewReplacer("{saleId}", "9001", "{holdId}", "phd_00000000000000000000000000").Replace(rt.pattern)}
			if rt.method != http.MethodGet {
				q.body = "{}"
			}
			t.Run(rt.method+" "+rt.pattern, func(t *testing.T) {
				for _, c := range cases {
					q := q
					q.tenant, q.creds, q.noAuth = c.tenant, c.creds, c.creds == nil
					r := e.posDo(t, q)
					if c.status == http.StatusBadRequest && c.tenant == other.ID {
						switch rt.method {
						case http.MethodGet: // no body to refuse: no such sale
							posRequireProblem(t, r, http.StatusNotFound, "resource-not-found")
							continue
						case http.MethodDelete: // no body to refuse: no such hold
							unavailable := "points-hold-unavailable"
							if strings.HasPrefix(rt.pattern, "/wallets/") {
								unavailable = "wallet-hold-unavailable"
							}
							posRequireProblem(t, r, http.StatusUnprocessableEntity, unavailable)
							continue
						}
					}
					require.Equal(t, c.status, r.status, "%s: %s", c.name, r.body)
					posRequireProblem(t, r, c.status, c.problem)
				}
			})
		}
	})
}
