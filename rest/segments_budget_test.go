package rest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// costlyRule is a rule of nested exists macros, under the cost limit of one
// customer's evaluation (about 80,000 of CEL's units) but not translated to
// SQL: evaluated customer by customer, it costs milliseconds of CPU each.
func costlyRule() string {
	nums := make([]string, 25)
	for i := range nums {
		nums[i] = fmt.Sprint(i + 1)
	}
	l := "[" + strings.Join(nums, ", ") + "]"
	return l + ".exists(a, " + l + ".exists(b, " + l + `.exists(c, a * b * c == 0 || consents.exists(x, x == "fax" && level == "gold"))))` +
		` || segments.exists(s, s.startsWith("seg_fax")) && ` + l + `.exists(d, d * d == 2) && points > 1000000`
}

// budgetSetup is a tenant with n customers, written in the database.
func budgetSetup(t *testing.T, db *storage.DB, n int) *segEnv {
	t.Helper()
	e := segSetup(t, db)
	ctx := viewer.TenantContext(context.Background(), e.tenantID)
	batch := make([]*ent.CustomerCreate, 0, n)
	for i := range n {
		batch = append(batch, db.Ent.Customer.Create().SetName(fmt.Sprintf("Cliente %d", i)).SetDocument(cpfFor(500000+i)))
	}
	require.NoError(t, db.Ent.Customer.CreateBulk(batch...).Exec(ctx))
	return e
}

// TestAudiencePreviewBudget: a rule evaluated customer by customer stops at
// the request's budget of CEL cost, summed over its customers, answering
// 422 audience_too_costly on preview (REST and GraphQL) and on save
// (nothing saved); a client's previews in flight are capped (429 with
// Retry-After), and one whose client leaves stops, freeing its place.
func TestAudiencePreviewBudget(t *testing.T) {
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := budgetSetup(t, db, 300)
		rule := costlyRule()
		require.Greater(t, len(rule), 500)

		start := time.Now()
		r := e.do(t, http.MethodPost, "/v1/segments/preview", map[string]any{"rule": rule})
		requireV1Error(t, r, http.StatusUnprocessableEntity, "audience_too_costly", "rule")
		t.Logf("refused in %v", time.Since(start))

		r = e.do(t, http.MethodPost, "/graphql", map[string]any{"query": `query($r: String!) { previewAudience(rule: $r) { count } }`,
			"variables": map[string]any{"r": rule}})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		require.Equal(t, []string{"audience_too_costly"}, gqlCodes(t, string(r.body)))

		r = e.do(t, http.MethodPost, "/v1/segments", map[string]any{"name": "caro", "rule": rule})
		requireV1Error(t, r, http.StatusUnprocessableEntity, "audience_too_costly", "rule")
		r = e.do(t, http.MethodGet, "/v1/segments?type=audience", nil)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		require.Empty(t, r.obj(t)["data"], "%s", r.body)

		// A cheap rule still previews.
		r = e.do(t, http.MethodPost, "/v1/segments/preview", map[string]any{"rule": `city == "Recife"`})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)

		// Three costly previews at once, whose clients leave: one is
		// refused, the others stop there (logged 499, the client gone,
		// not 422 at the end of their budget), and a preview is served
		// again.
		mark := e.logs.Len()
		ctx, leave := context.WithCancel(context.Background())
		refused := make(chan apiResp, 3)
		var running sync.WaitGroup
		for range 3 {
			running.Go(func() {
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.srv.URL+"/v1/segments/preview",
					strings.NewReader(fmt.Sprintf(`{"rule": %q}`, rule)))
				if err != nil {
					return
				}
				req.Header.Set("Authorization", "Bearer "+e.token)
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					return
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusTooManyRequests {
					refused <- apiResp{status: resp.StatusCode, header: resp.Header, body: body}
				}
			})
		}
		select {
		case r := <-refused:
			requireV1Error(t, r, http.StatusTooManyRequests, "too_many_previews", "")
			require.NotEmpty(t, r.header.Get("Retry-After"))
		case <-time.After(30 * time.Second):
			t.Fatal("a third preview in flight was not refused")
		}
		leave()
		running.Wait()
		var statuses []int
		require.Eventually(t, func() bool {
			statuses = nil
			for line := range strings.Lines(e.logs.Since(mark)) {
				var l struct {
					Path   string
					Status int
				}
				if json.Unmarshal([]byte(line), &l) == nil && l.Path == "/v1/segments/preview" {
					statuses = append(statuses, l.Status)
				}
			}
			return len(statuses) == 3
		}, 30*time.Second, 10*time.Millisecond)
		slices.Sort(statuses)
		require.Equal(t, []int{http.StatusTooManyRequests, statusClientClosed, statusClientClosed}, statuses)
		served := false
		for deadline := time.Now().Add(10 * time.Second); !served && time.Now().Before(deadline); {
			r = e.do(t, http.MethodPost, "/v1/segments/preview", map[string]any{"rule": `level == "gold"`})
			served = r.status == http.StatusOK
		}
		require.True(t, served, "the previews whose clients left still hold their places: %s", r.body)
	})
}
