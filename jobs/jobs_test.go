package jobs_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/jobs"
)

// TestArgsRoundTrip: every job's arguments read back equal from the JSON
// River stores, under fixed names, and every kind is listed once.
func TestArgsRoundTrip(t *testing.T) {
	cases := []struct {
		args river.JobArgs
		json string
	}{
		{jobs.ProcessSale{TenantID: "t1", SaleID: "sal_1"}, `{"tenant_id":"t1","sale_id":"sal_1"}`},
		{jobs.ProcessSaleReturn{TenantID: "t1", ReturnID: "ret_1"}, `{"tenant_id":"t1","return_id":"ret_1"}`},
		{jobs.ScoreCustomers{}, `{}`}, {jobs.ScoreCustomers{TenantID: "t1"}, `{"tenant_id":"t1"}`},
		{jobs.ReleasePendingPoints{}, `{}`},
		{jobs.ImportCustomers{TenantID: "t1", ImportID: "imp_1"}, `{"tenant_id":"t1","import_id":"imp_1"}`},
		{jobs.CreditCashback{TenantID: "t1", RedemptionID: "rdm_1"}, `{"tenant_id":"t1","redemption_id":"rdm_1"}`},
		{jobs.DeliverWebhook{TenantID: "t1", DeliveryID: "whd_1"}, `{"tenant_id":"t1","delivery_id":"whd_1"}`},
		{jobs.ExpirePoints{}, `{}`}, {jobs.NotifyExpiringPoints{}, `{}`}, {jobs.RecomputeLevels{}, `{}`}, {jobs.RecomputeAudiences{}, `{}`},
		{jobs.CampaignLifecycle{}, `{}`}, {jobs.PurgeExpired{}, `{}`}, {jobs.DispatchEvents{}, `{}`}, {jobs.PruneSigningKeys{}, `{}`},
		{jobs.UpkeepWallets{}, `{}`},
		{jobs.UpkeepGiftCards{}, `{}`},
	}
	kinds := map[string]bool{}
	for _, c := range cases {
		t.Run(c.args.Kind(), func(t *testing.T) {
			raw, err := json.Marshal(c.args)
			require.NoError(t, err)
			require.JSONEq(t, c.json, string(raw))
			back := reflect.New(reflect.TypeOf(c.args))
			require.NoError(t, json.Unmarshal([]byte(c.json), back.Interface()))
			require.Equal(t, c.args, back.Elem().Interface())
		})
		kinds[c.args.Kind()] = true
	}
	t.Run("deliver_webhook queued before its tenant", func(t *testing.T) {
		var old jobs.DeliverWebhook
		require.NoError(t, json.Unmarshal([]byte(`{"delivery_id":"whd_1"}`), &old))
		require.Equal(t, jobs.DeliverWebhook{DeliveryID: "whd_1"}, old, "read with no tenant: the operation finds it")
	})
	require.ElementsMatch(t, jobs.Kinds(), func() []string {
		var ks []string
		for k := range kinds {
			ks = append(ks, k)
		}
		return ks
	}(), "Kinds lists every job once")
}
