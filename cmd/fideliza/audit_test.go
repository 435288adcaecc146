package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/auditevent"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// TestAdminCommandsAreAudited: the operator's back-office changes at the
// admin CLI (a tenant and its settings, a client, its secret and its
// revocation, a store) are in the tenant's audit trail, by operator:<name>.
func TestAdminCommandsAreAudited(t *testing.T) {
	t.Parallel()
	for _, d := range storagetest.Dialects() {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			u := storagetest.URL(t, d, true)
			logs := &syncBuffer{}
			tenant := fideliza(t, logs, u, "tenant", "create", "--name", "Mercado")["id"].(string)
			fideliza(t, logs, u, "tenant", "update", "--tenant", tenant, "--pre-registration=true")
			client := fideliza(t, logs, u, "client", "create", "--tenant", tenant, "--kind", "oauth", "--scopes", "customers:read")["client_id"].(string)
			fideliza(t, logs, u, "client", "rotate", "--client-id", client)
			fideliza(t, logs, u, "client", "revoke", "--client-id", client)
			store := fideliza(t, logs, u, "store", "create", "--tenant", tenant, "--code", "L1", "--name", "Loja 1")["id"].(string)

			db, err := storage.Open(context.Background(), u)
			require.NoError(t, err)
			defer db.Close()
			rows, err := db.Ent.AuditEvent.Query().Order(ent.Asc(auditevent.FieldID)).
				All(viewer.TenantContext(context.Background(), tenant))
			require.NoError(t, err)
			type entry struct{ actor, kind, action, target string }
			var got []entry
			for _, r := range rows {
				got = append(got, entry{r.Actor, r.ActorKind, r.Action, r.TargetID})
			}
			me := "operator:" + operator()
			require.Equal(t, []entry{
				{me, "operator", "tenant_settings.created", tenant},
				{me, "operator", "tenant_settings.updated", tenant},
				{me, "operator", "api_client.created", client},
				{me, "operator", "api_client.updated", client},
				{me, "operator", "api_client.updated", client},
				{me, "operator", "store.created", store},
			}, got)
		})
	}
}
