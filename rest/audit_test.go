package rest

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/app/privacy"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/auditevent"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// TestAuditTrail: the back office's changes (campaigns, settings, point
// adjustments, webhook endpoints), exports and erasures are recorded with
// their actor, action, target and changed fields; the service's own work
// (redemptions moving a campaign's counters) is not.
func TestAuditTrail(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := campSetup(t, db)
		token := e.tokenFor(t, "customers:read", "customers:write", campScopeRead, campScopeWrite, "webhooks:write",
			privacy.ScopePrivacyRead, privacy.ScopePrivacyWrite)
		client := e.client.Client.ID
		camp := e.campCreateID(t, "discount", "limits", map[string]any{"total": 100})
		customer := e.campCustomer(t, "Rui")
		for i := range 3 { // the counters the redemptions move are not audited
			tok := e.campTokenFor(t, customer)
			r := e.campRedeem(t, camp, campRedeemBody(customer, "audit-"+string(rune('a'+i)), tok, "30.00"))
			require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		}
		require.Equal(t, http.StatusOK, e.campDo(t, http.MethodDelete, "/v1/campaigns/"+camp, token, nil).status)
		hook := e.bearer(t, http.MethodPost, "/v1/webhooks", token, map[string]any{"url": "https://hooks.example.invalid/x", "events": []string{"sale.processed"}})
		require.Equal(t, http.StatusCreated, hook.status, "%s", hook.body)
		require.Equal(t, http.StatusOK, e.bearer(t, http.MethodGet, "/v1/customers/"+customer+"/export", token, nil).status)
		require.Equal(t, http.StatusNoContent, e.bearer(t, http.MethodDelete, "/v1/customers/"+customer, token, nil).status)

		user := viewer.NewContext(context.Background(), viewer.Viewer{Role: viewer.RoleAdmin, TenantID: e.tenantID, Subject: "ana@loja.example"})
		_, err := e.app.Backoffice.UpdateTenant(user, e.tenantID, backoffice.TenantSettings{PreRegistration: opt.Of(true).Ptr()})
		require.NoError(t, err)
		other := e.campCustomer(t, "Sol")
		_, err = e.app.Loyalty.AdjustPoints(user, loyalty.AdjustInput{CustomerID: other, Points: 50, Reason: "cortesia"})
		require.NoError(t, err)

		rows, err := db.Ent.AuditEvent.Query().Order(ent.Asc(auditevent.FieldID)).All(e.ctx)
		require.NoError(t, err)
		type entry struct{ actor, kind, action, target string }
		var got []entry
		for _, r := range rows {
			got = append(got, entry{r.Actor, r.ActorKind, r.Action, r.TargetID})
			require.Equal(t, e.tenantID, r.TenantID)
		}
		webhookID := hook.obj(t)["id"].(string)
		require.Equal(t, []entry{
			{client, "client", "campaign.created", camp},
			{client, "client", "campaign.updated", camp},
			{client, "client", "webhook_endpoint.created", webhookID},
			{client, "client", "customer.exported", customer},
			{client, "client", "customer.erased", customer},
			{"ana@loja.example", "user", "tenant_settings.updated", e.tenantID},
			{"ana@loja.example", "user", "points_adjustment.created", got[len(got)-1].target},
		}, got)
		require.Equal(t, []string{"status"}, rows[1].Fields, "ending a campaign changes its status")
		require.True(t, slices.Contains(rows[5].Fields, "pre_registration"), "%v", rows[5].Fields)

		// Append-only: a tenant's principal cannot change or delete it.
		require.Error(t, db.Ent.AuditEvent.UpdateOneID(rows[0].ID).Exec(e.ctx))
		require.Error(t, db.Ent.AuditEvent.DeleteOneID(rows[0].ID).Exec(e.ctx))

		// Retention: kept 30 days, the trail is gone after 31.
		_, err = e.app.Backoffice.UpdateTenant(user, e.tenantID, backoffice.TenantSettings{AuditRetentionDays: opt.Of(30).Ptr()})
		require.NoError(t, err)
		require.NoError(t, e.app.Privacy.PurgeExpired(context.Background(), jobs.PurgeExpired{}))
		kept, err := db.Ent.AuditEvent.Query().Count(e.ctx)
		require.NoError(t, err)
		require.Equal(t, len(rows)+1, kept, "within the retention")
		e.clock.Set(time.Now().AddDate(0, 0, 31))
		require.NoError(t, e.app.Privacy.PurgeExpired(context.Background(), jobs.PurgeExpired{}))
		kept, err = db.Ent.AuditEvent.Query().Count(e.ctx)
		require.NoError(t, err)
		require.Zero(t, kept)
		_, err = e.app.Backoffice.UpdateTenant(user, e.tenantID, backoffice.TenantSettings{AuditRetentionDays: opt.Of(10).Ptr()})
		require.Error(t, err, "at least 30 days")
	})
}
