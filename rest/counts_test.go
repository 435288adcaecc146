package rest_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// TestConnectionCountsBounded: a connection's totalCount is exact up to
// storage.CountBound rows and CountBound+1 ("more than") beyond, whatever
// the filter; pageInfo still says there is a next page; and counts outside
// GraphQL's connections stay exact.
func TestConnectionCountsBounded(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newFixture(t, db)
		ctx := viewer.TenantContext(context.Background(), f.tenantID)
		const many, few = storage.CountBound + 7, 3
		for i := 0; i < many+few; i += 2000 {
			bulk := make([]*ent.EventCreate, 0, 2000)
			for j := i; j < min(many+few, i+2000); j++ {
				typ := "test.many"
				if j >= many {
					typ = "test.few"
				}
				bulk = append(bulk, db.Ent.Event.Create().SetTenantID(f.tenantID).SetType(typ).SetData(map[string]any{"i": j}))
			}
			require.NoError(t, db.Ent.Event.CreateBulk(bulk...).Exec(ctx))
		}
		exact, err := db.Ent.Event.Query().Count(ctx)
		require.NoError(t, err)
		require.GreaterOrEqual(t, exact, many+few, "a count outside GraphQL is exact")

		tok, err := f.app.Auth.IssueUserToken(sys(), f.tenantID, viewer.RoleAnalyst, "analyst", time.Hour)
		require.NoError(t, err)
		for _, tc := range []struct {
			name, filter string
			want         int
		}{
			{"every event", ``, storage.CountBound + 1},
			{"past the bound", `, where: {type: "test.many"}`, storage.CountBound + 1},
			{"within the bound", `, where: {type: "test.few"}`, few},
			{"none", `, where: {type: "test.none"}`, 0},
		} {
			t.Run(tc.name, func(t *testing.T) {
				a := f.gql(t, tok, `{ events(first: 2`+tc.filter+`) { totalCount pageInfo { hasNextPage } edges { node { id } } } }`, nil)
				require.Empty(t, a.Errors, "%s", a.Raw)
				var got struct {
					Events struct {
						TotalCount int
						PageInfo   struct{ HasNextPage bool }
						Edges      []struct{}
					}
				}
				require.NoError(t, json.Unmarshal(a.Data, &got))
				require.Equal(t, tc.want, got.Events.TotalCount)
				require.Equal(t, tc.want > 2, got.Events.PageInfo.HasNextPage)
				require.Len(t, got.Events.Edges, min(2, tc.want))
			})
		}
	})
}
