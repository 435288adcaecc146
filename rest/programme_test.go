package rest_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// TestProgrammeSettingsOverGraphQL: an admin sets the programme's calendar
// with updateTenantSettings and reads it back on the tenant; a value out of
// range is a validation error naming its field, and changes nothing.
func TestProgrammeSettingsOverGraphQL(t *testing.T) {
	t.Parallel()
	f := newFixture(t, storagetest.Open(t, storagetest.Dialects()[0]))
	admin := f.userToken(t, f.tenantID, viewer.RoleAdmin)
	const fields = `timeZone pointsPendingDays levelGraceDays churnRefitDays`

	a := f.gql(t, admin, `mutation { updateTenantSettings(input: {timeZone: "America/Manaus", pointsPendingDays: 3,
		levelGraceDays: 10, churnRefitDays: 2}) { `+fields+` } }`, nil)
	require.Empty(t, a.Errors, "%s", a.Raw)
	want := `{"updateTenantSettings":{"timeZone":"America/Manaus","pointsPendingDays":3,"levelGraceDays":10,"churnRefitDays":2}}`
	require.JSONEq(t, want, string(a.Data))

	for _, bad := range []struct{ input, field string }{
		{`{timeZone: "Local"}`, "time_zone"},
		{`{pointsPendingDays: 91}`, "points_pending_days"},
		{`{levelGraceDays: -1}`, "level_grace_days"},
		{`{churnRefitDays: 0}`, "churn_refit_days"},
		{`{pointsSpendMaxShareLevels: [{level: bronze, share: "0.5"}]}`, "points_spend_max_share_levels"},
		{`{pointsSpendMaxShareLevels: [{level: gold, share: "1.2"}]}`, "points_spend_max_share_gold"},
	} {
		a := f.gql(t, admin, `mutation { updateTenantSettings(input: `+bad.input+`) { id } }`, nil)
		require.Equal(t, []string{"validation_error"}, a.codes(), "%s", a.Raw)
		require.Contains(t, string(a.Raw), bad.field)
	}
	a = f.gql(t, admin, `{ tenants { edges { node { `+fields+` } } } }`, nil)
	require.JSONEq(t, `{"tenants":{"edges":[{"node":{"timeZone":"America/Manaus","pointsPendingDays":3,"levelGraceDays":10,"churnRefitDays":2}}]}}`,
		string(a.Data), "refused changes change nothing")

	// A level's own share of a sale payable with points, and back to the programme's.
	for _, c := range []struct{ share, want string }{{`"0.8"`, `"0.8"`}, {`null`, `null`}} {
		a = f.gql(t, admin, `mutation { updateTenantSettings(input: {pointsSpendMaxShareLevels: [{level: gold, share: `+c.share+`}]}) {
			pointsSpendMaxShareGold pointsSpendMaxShareSilver } }`, nil)
		require.Empty(t, a.Errors, "%s", a.Raw)
		require.JSONEq(t, `{"updateTenantSettings":{"pointsSpendMaxShareGold":`+c.want+`,"pointsSpendMaxShareSilver":null}}`, string(a.Data))
	}
}
