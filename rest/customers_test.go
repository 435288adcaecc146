package rest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/viewer"
)

const (
	custScopeRead  = "customers:read"
	custScopeWrite = "customers:write"
)

// custEnv is the test environment with a token of its tenant holding both
// customer scopes.
type custEnv struct {
	*TestEnv
	token string

	mu   sync.Mutex
	cpfs []string // every CPF a test sent: no response may carry its digits
}

func custSys() context.Context { return viewer.SystemContext(context.Background()) }

func custSetup(t *testing.T, db *storage.DB) *custEnv {
	t.Helper()
	e := &custEnv{TestEnv: newTestEnv(t, db)}
	e.token = e.tokenFor(t, custScopeRead, custScopeWrite)
	return e
}

// custNewCPF returns a fresh valid CPF (11 digits) and remembers it as a
// secret that no response body may carry.
func (e *custEnv) custNewCPF() string {
	for {
		base := fmt.Sprintf("%09d", rand.IntN(1_000_000_000))
		if strings.Count(base, base[:1]) == len(base) {
			continue
		}
		d := cpfCheck(base)
		e.custSecret(d)
		return d
	}
}

// custFormatCPF renders 11 digits as 000.000.000-00.
func custFormatCPF(d string) string {
	return d[:3] + "." + d[3:6] + "." + d[6:9] + "-" + d[9:]
}

// custMasked is the documented masked rendering of a CPF.
func custMasked(d string) string { return "***.***.***-" + d[9:] }

func (e *custEnv) custSecret(cpfDigits string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.cpfs = append(e.cpfs, cpfDigits)
}

// custRequireNoCPF fails when text carries a remembered CPF, raw or
// formatted.
func (e *custEnv) custRequireNoCPF(t *testing.T, what, text string) {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, d := range e.cpfs {
		require.NotContains(t, text, d, "%s carries a raw CPF", what)
		if len(d) == 11 {
			require.NotContains(t, text, custFormatCPF(d), "%s carries a formatted CPF", what)
		}
	}
}

// custRaw sends a request with a raw body and content type; no answer
// holds a CPF.
func (e *custEnv) custRaw(t *testing.T, method, path, token, contentType, body string) apiResp {
	t.Helper()
	r := apiRaw(t, e.srv, method, path, token, contentType, body)
	e.custRequireNoCPF(t, method+" "+path+" response", string(r.body)+fmt.Sprint(r.header))
	return r
}

// custDo sends body (see apiBody).
func (e *custEnv) custDo(t *testing.T, method, path, token string, body any) apiResp {
	t.Helper()
	raw, ct := apiBody(t, body)
	return e.custRaw(t, method, path, token, ct, raw)
}

// custCreate posts a customer and returns its id.
func (e *custEnv) custCreate(t *testing.T, token string, body map[string]any) string {
	t.Helper()
	r := e.custDo(t, http.MethodPost, "/v1/customers", token, body)
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	id, _ := r.obj(t)["id"].(string)
	require.NotEmpty(t, id)
	return id
}

// custGet reads the full record of a customer.
func (e *custEnv) custGet(t *testing.T, id string) map[string]any {
	t.Helper()
	r := e.custDo(t, http.MethodGet, "/v1/customers/"+id, e.token, nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	return r.obj(t)
}

// custBasic is a create body with the required fields.
func custBasic(name, email, cpf string) map[string]any {
	return map[string]any{"name": name, "email": email, "cpf": cpf}
}

// custTimestamp matches ISO 8601 with an offset.
var custTimestamp = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$`)

// custRequireTime checks an ISO 8601 timestamp with offset lying in
// [from, to] (from truncated to the second) and returns it.
func custRequireTime(t *testing.T, v any, from, to time.Time) time.Time {
	t.Helper()
	s, ok := v.(string)
	require.True(t, ok, "timestamp %v is not a string", v)
	require.Regexp(t, custTimestamp, s)
	ts, err := time.Parse(time.RFC3339Nano, s)
	require.NoError(t, err)
	require.False(t, ts.Before(from.Truncate(time.Second)), "%s is before %s", s, from)
	require.False(t, ts.After(to), "%s is after %s", s, to)
	return ts
}

// custSegment creates a segment of tenantID and adds the customers to it.
func (e *custEnv) custSegment(t *testing.T, tenantID, name string, customerIDs ...string) string {
	t.Helper()
	seg, err := e.db.Ent.Segment.Create().SetTenantID(tenantID).SetName(name).Save(custSys())
	require.NoError(t, err)
	for _, id := range customerIDs {
		require.NoError(t, e.db.Ent.Customer.UpdateOneID(id).AddSegmentIDs(seg.ID).Exec(custSys()))
	}
	return seg.ID
}

// custCount counts the customers of every tenant in the database.
func (e *custEnv) custCount(t *testing.T, ps ...func(*ent.CustomerQuery)) int {
	t.Helper()
	q := e.db.Ent.Customer.Query()
	for _, p := range ps {
		p(q)
	}
	n, err := q.Count(custSys())
	require.NoError(t, err)
	return n
}

// custPage is a decoded list answer.
type custPage struct {
	ids        []string
	items      []map[string]any
	nextCursor any
	hasMore    bool
	total      int
}

func (e *custEnv) custList(t *testing.T, token string, query url.Values) custPage {
	t.Helper()
	path := "/v1/customers"
	if len(query) > 0 {
		path += "?" + query.Encode()
	}
	r := e.custDo(t, http.MethodGet, path, token, nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	m := r.obj(t)
	require.Equal(t, []string{"data", "pagination"}, sortedKeys(m))
	data, ok := m["data"].([]any)
	require.True(t, ok, "data is not an array: %s", r.body)
	p := custPage{}
	for _, d := range data {
		item := d.(map[string]any)
		p.items = append(p.items, item)
		p.ids = append(p.ids, item["id"].(string))
	}
	var total int64
	p.nextCursor, p.hasMore, total = requirePagination(t, m)
	p.total = int(total)
	return p
}

// custWalk follows next_cursor from the first page and returns every id.
func (e *custEnv) custWalk(t *testing.T, query url.Values, wantPages int) []string {
	t.Helper()
	var all []string
	q := url.Values{}
	for k, v := range query {
		q[k] = v
	}
	pages := 0
	for {
		p := e.custList(t, e.token, q)
		pages++
		all = append(all, p.ids...)
		if !p.hasMore {
			break
		}
		require.Less(t, pages, 1000, "pagination does not end")
		q.Set("cursor", p.nextCursor.(string))
	}
	require.Equal(t, wantPages, pages)
	return all
}

func custReversed(s []string) []string {
	out := slices.Clone(s)
	slices.Reverse(out)
	return out
}
