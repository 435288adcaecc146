package rest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// Instants in the years 10000 and -1 in UTC, which SQLite stores but cannot
// read back.
const (
	year10000 = "9999-12-31T23:59:59-23:59"
	yearMinus = "0000-01-01T00:00:00+01:00"
)

// timestampsEnv sends /v1 and GraphQL requests with every scope the
// campaigns, customers and dashboards need.
type timestampsEnv struct {
	*fixture
	token string
}

func newTimestampsEnv(t *testing.T, db *storage.DB) *timestampsEnv {
	f := newFixture(t, db)
	scopes := "campaigns:read campaigns:write customers:read loyalty:read"
	return &timestampsEnv{fixture: f, token: f.token(t, f.client(t, apiclient.KindOauth, strings.Fields(scopes)...), scopes)}
}

func (e *timestampsEnv) send(t *testing.T, method, path string, body any) response {
	t.Helper()
	var raw []byte
	if body != nil {
		var err error
		raw, err = json.Marshal(body)
		require.NoError(t, err)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, bytes.NewReader(raw))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+e.token)
	req.Header.Set("Content-Type", "application/json")
	return do(t, http.DefaultClient, req)
}

func campaignBody(startsAt, endsAt string) map[string]any {
	return map[string]any{"name": "Natal", "type": "bonus_points", "discount": map[string]any{"multiplier": 2}, "starts_at": startsAt, "ends_at": endsAt}
}

// requireCampaignsWork: the campaign list, a campaign's GET and DELETE, and
// GraphQL's campaigns answer.
func (e *timestampsEnv) requireCampaignsWork(t *testing.T, id string) {
	t.Helper()
	res := e.send(t, http.MethodGet, "/v1/campaigns", nil)
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	res = e.send(t, http.MethodGet, "/v1/campaigns/"+id, nil)
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	res = e.send(t, http.MethodDelete, "/v1/campaigns/"+id, nil)
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	a := e.gql(t, e.token, `{ campaigns(first: 50) { totalCount edges { node { id startsAt endsAt } } } }`, nil)
	require.Empty(t, a.Errors, "%s", a.Raw)
}

// TestTimestampsOutOfRange: every instant an interface takes is refused,
// 422 validation_error naming its field, outside the years 0001 to 9999 in
// UTC, as the point of sale's dates are; the campaigns stay readable.
func TestTimestampsOutOfRange(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := newTimestampsEnv(t, db)
		res := e.send(t, http.MethodPost, "/v1/campaigns", campaignBody("2026-01-01T00:00:00Z", "2099-01-01T00:00:00Z"))
		require.Equal(t, http.StatusCreated, res.status, "%s", res.body)
		id := res.json(t)["id"].(string)

		for _, bad := range []string{year10000, yearMinus} {
			t.Run(bad, func(t *testing.T) {
				cases := []struct {
					name, method, path string
					body               any
					field              string
				}{
					{"campaign ends_at", http.MethodPost, "/v1/campaigns", campaignBody("2026-01-01T00:00:00Z", bad), "ends_at"},
					{"campaign starts_at", http.MethodPost, "/v1/campaigns", campaignBody(bad, "2099-01-01T00:00:00Z"), "starts_at"},
					{"customers created_after", http.MethodGet, "/v1/customers?created_after=" + url.QueryEscape(bad), nil, "created_after"},
				}
				for _, c := range cases {
					res := e.send(t, c.method, c.path, c.body)
					require.Equal(t, http.StatusUnprocessableEntity, res.status, "%s: %s", c.name, res.body)
					out := res.json(t)
					require.Equal(t, "validation_error", out["error"], "%s", c.name)
					require.Equal(t, c.field, out["field"], "%s: %s", c.name, res.body)
				}

				gql := []struct{ name, query, field string }{
					{"createCampaign endsAt", `mutation($t: Time!) { createCampaign(input: {name: "Natal", type: gift, giftSku: "G",
						startsAt: "2026-01-01T00:00:00Z", endsAt: $t}) { id } }`, "ends_at"},
					{"createCampaign startsAt", `mutation($t: Time!) { createCampaign(input: {name: "Natal", type: gift, giftSku: "G",
						startsAt: $t, endsAt: "2099-01-01T00:00:00Z"}) { id } }`, "starts_at"},
					{"activeCustomers from", `query($t: Time!) { activeCustomers(from: $t, to: "2099-01-01T00:00:00Z") }`, "from"},
				}
				for _, c := range gql {
					a := e.gql(t, e.token, c.query, map[string]any{"t": bad})
					require.Len(t, a.Errors, 1, "%s: %s", c.name, a.Raw)
					require.Equal(t, "validation_error", a.Errors[0].Extensions["code"], "%s: %s", c.name, a.Raw)
					require.Equal(t, c.field, a.Errors[0].Extensions["field"], "%s: %s", c.name, a.Raw)
				}
			})
		}
		e.requireCampaignsWork(t, id)
	})
}

// TestCampaignDatesStoredOutOfRange: a campaign stored before the guard
// with an end in the year 10000 (in the database's own format) is brought
// back in range by the migration, after which it lists, reads and ends.
func TestCampaignDatesStoredOutOfRange(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := newTimestampsEnv(t, db)
		res := e.send(t, http.MethodPost, "/v1/campaigns", campaignBody("2026-01-01T00:00:00Z", "2099-01-01T00:00:00Z"))
		require.Equal(t, http.StatusCreated, res.status, "%s", res.body)
		id := res.json(t)["id"].(string)

		ctx := context.Background()
		update := map[string]string{
			"sqlite3":  `UPDATE campaigns SET ends_at = '10000-12-31 23:58:59+00:00' WHERE id = ?`,
			"postgres": `UPDATE campaigns SET ends_at = '10000-12-31 23:58:59+00' WHERE id = $1`,
		}[db.Dialect]
		_, err := db.SQL.ExecContext(ctx, update, id)
		require.NoError(t, err)
		// Migration 26 runs again (later ones are applied, so Migrate would not).
		all, err := storage.Migrations(db.Dialect)
		require.NoError(t, err)
		i := slices.IndexFunc(all, func(m storage.Migration) bool { return m.Version == 26 })
		require.GreaterOrEqual(t, i, 0)
		_, err = db.SQL.ExecContext(ctx, all[i].SQL)
		require.NoError(t, err)

		c, err := e.app.DB.Ent.Campaign.Get(viewer.SystemContext(ctx), id)
		require.NoError(t, err)
		require.Equal(t, 9999, c.EndsAt.UTC().Year())
		e.requireCampaignsWork(t, id)
	})
}
