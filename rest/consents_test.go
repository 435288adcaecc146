package rest

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/app/privacy"
	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/consentchange"
	"github.com/fideliza/fideliza/ent/event"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// TestConsentHistory: every consent a customer gives or withdraws, per
// purpose, is kept with its instant, channel and source (an API client, a
// back-office user, the erasure) and announced as customer.consent_changed;
// writes that change no consent record nothing.
func TestConsentHistory(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := campSetup(t, db)
		token := e.tokenFor(t, "customers:read", "customers:write", privacy.ScopePrivacyRead, privacy.ScopePrivacyWrite)
		cpf := e.campCPF()
		created := e.bearer(t, http.MethodPost, "/v1/customers", token, map[string]any{"name": "Lia", "email": "lia@example.com",
			"cpf": cpf, "consent": map[string]any{"marketing_email": true}})
		require.Equal(t, http.StatusCreated, created.status, "%s", created.body)
		id := created.obj(t)["id"].(string)
		patch := func(consent map[string]any) map[string]any {
			t.Helper()
			r := e.bearer(t, http.MethodPatch, "/v1/customers/"+id, token, map[string]any{"consent": consent})
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			return r.obj(t)["consent"].(map[string]any)
		}
		got := patch(map[string]any{"marketing_email": true, "marketing_whatsapp": true})
		require.Equal(t, true, got["marketing_whatsapp"])
		require.Equal(t, false, got["data_sharing"])
		patch(map[string]any{"marketing_sms": false}) // no change: nothing recorded

		// A back-office user grants data sharing (GraphQL and the panel
		// call this operation).
		user := viewer.NewContext(context.Background(), viewer.Viewer{Role: viewer.RoleAdmin, TenantID: e.tenantID, Subject: "ana@loja.example",
			Scopes: auth.RoleScopes(viewer.RoleAdmin)})
		_, err := e.app.Customers.PatchCustomer(user, id, customers.CustomerInput{Consent: opt.Of(customers.ConsentInput{DataSharing: opt.Of(true)})})
		require.NoError(t, err)
		client := e.client.Client.ID

		erase := e.bearer(t, http.MethodDelete, "/v1/customers/"+id, token, nil)
		require.Equal(t, http.StatusNoContent, erase.status, "%s", erase.body)

		type change struct {
			purpose consentchange.Purpose
			granted bool
			channel consentchange.Channel
			source  string
		}
		rows, err := db.Ent.ConsentChange.Query().Where(consentchange.CustomerID(id)).Order(ent.Asc(consentchange.FieldID)).All(e.ctx)
		require.NoError(t, err)
		var history []change
		for _, r := range rows {
			history = append(history, change{r.Purpose, r.Granted, r.Channel, r.Source})
			require.False(t, r.CreatedAt.IsZero())
		}
		require.Equal(t, []change{
			{consentchange.PurposeMarketingEmail, true, consentchange.ChannelAPI, client},
			{consentchange.PurposeMarketingWhatsapp, true, consentchange.ChannelAPI, client},
			{consentchange.PurposeDataSharing, true, consentchange.ChannelBackOffice, "ana@loja.example"},
			{consentchange.PurposeMarketingEmail, false, consentchange.ChannelErasure, client},
			{consentchange.PurposeMarketingWhatsapp, false, consentchange.ChannelErasure, client},
			{consentchange.PurposeDataSharing, false, consentchange.ChannelErasure, client},
		}, history)
		n, err := db.Ent.Event.Query().Where(event.TypeEQ(outbox.CustomerConsentChanged), event.SubjectID(id)).Count(e.ctx)
		require.NoError(t, err)
		require.Equal(t, len(history), n, "one customer.consent_changed per change")
	})
}
