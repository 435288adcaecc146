package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/viewer"
)

const (
	posStore    = "LJ001"
	posStore2   = "LJ002"
	posDate     = "2026-03-14T10:20:30-03:00"
	posGTINA    = "7891000000011"
	posGTINB    = "7891000000022"
	posGTINC    = "7891000000033"
	posGTIND    = "7891000000044"
	posGTINE    = "7891000000055"
	posGTINF    = "7891000000066"
	posDefault  = "00000000000"
	posCNPJAlfa = "12ABC34501DE35" // the alphanumeric CNPJ of 2026
)

// posEnv is a handler over a fresh database with a tenant, a store and a
// POS client of that tenant.
type posEnv struct {
	*TestEnv
	clientID string // the POS client's credentials
	secret   string
}

func posSys() context.Context { return viewer.SystemContext(context.Background()) }

// posNewEnv is the test environment without a server, with a store.
func posNewEnv(tb testing.TB, db *storage.DB, configure ...func(*ServerSetup)) *posEnv {
	tb.Helper()
	configure = append(configure, func(s *ServerSetup) { s.NoServer = true })
	e := &posEnv{TestEnv: newTestEnv(tb, db, configure...)}
	e.clientID, e.secret = e.posClient(tb)
	_, err := e.app.Backoffice.CreateStore(posSys(), e.tenantID, posStore, "Loja Centro")
	require.NoError(tb, err)
	return e
}

// posSetup is posNewEnv with a real HTTP server.
func posSetup(t *testing.T, db *storage.DB, configure ...func(*ServerSetup)) *posEnv {
	t.Helper()
	e := posNewEnv(t, db, configure...)
	e.srv = httptest.NewServer(e.handler)
	t.Cleanup(e.srv.Close)
	return e
}

func (e *posEnv) posTenantCtx() context.Context {
	return viewer.TenantContext(context.Background(), e.tenantID)
}

// posSettings changes tenant settings.
func (e *posEnv) posSettings(t *testing.T, s backoffice.TenantSettings) {
	t.Helper()
	_, err := e.app.Backoffice.UpdateTenant(posSys(), e.tenantID, s)
	require.NoError(t, err)
}

func posBool(b bool) *bool { return &b }

func posDecPtr(s string) *decimal.Decimal {
	d := decimal.RequireFromString(s)
	return &d
}

// posCPFSeq makes every CPF of a test run fresh.
var posCPFSeq atomic.Int64

// posCPF returns a fresh valid CPF (11 digits).
func posCPF() string {
	for {
		base := fmt.Sprintf("%09d", (posCPFSeq.Add(7919)+123_456_000)%1_000_000_000)
		if strings.Count(base, base[:1]) == len(base) {
			continue
		}
		return cpfCheck(base)
	}
}

// posCNPJCheck appends the two check digits to a 12-character base (digits
// and upper-case letters, each worth its ASCII code minus 48).
func posCNPJCheck(base string) string {
	digit := func(s string) byte {
		sum, w := 0, 2
		for i := len(s) - 1; i >= 0; i-- {
			sum += int(s[i]-'0') * w
			if w++; w > 9 {
				w = 2
			}
		}
		if r := sum % 11; r >= 2 {
			return byte('0' + 11 - r)
		}
		return '0'
	}
	s := base + string(digit(base))
	return s + string(digit(s))
}

func posFormatCPF(d string) string { return d[:3] + "." + d[3:6] + "." + d[6:9] + "-" + d[9:] }

// posCust describes a customer to store.
type posCust struct {
	typ                                   customer.DocumentType
	name, email, phone, birth, externalID string
	level                                 customer.Level
}

// posCustomer stores a customer of the env's tenant with document doc.
func (e *posEnv) posCustomer(tb testing.TB, doc string, c posCust) *ent.Customer {
	tb.Helper()
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	create := e.db.Ent.Customer.Create().SetTenantID(e.tenantID).SetDocument(doc).SetName(c.name).
		SetNillableEmail(opt(c.email)).SetNillablePhone(opt(c.phone)).SetNillableBirthDate(opt(c.birth)).
		SetNillableExternalID(opt(c.externalID))
	if c.typ != "" {
		create.SetDocumentType(c.typ)
	}
	if c.level != "" {
		create.SetLevel(c.level)
	}
	cu, err := create.Save(posSys())
	require.NoError(tb, err)
	return cu
}

// posCampaign creates an active campaign of the env's tenant.
func (e *posEnv) posCampaign(tb testing.TB, in campaigns.CampaignInput) string {
	tb.Helper()
	now := time.Now()
	start, end := now.Add(-time.Hour), now.AddDate(0, 1, 0)
	if in.StartsAt == nil {
		in.StartsAt = &start
	}
	if in.EndsAt == nil {
		in.EndsAt = &end
	}
	if in.Type == "" {
		in.Type = "discount"
	}
	c, err := e.app.Campaigns.CreateCampaign(e.posTenantCtx(), in)
	require.NoError(tb, err)
	return c.ID
}

// posPercent is a percentage discount campaign for channels, narrowed to
// skus when given.
func (e *posEnv) posPercent(tb testing.TB, name, pct string, channels []string, skus ...string) string {
	tb.Helper()
	in := campaigns.CampaignInput{Name: name, Channels: channels,
		Discount: &campaigns.DiscountInput{Mode: "percentage", Value: posDecPtr(pct)}}
	if len(skus) > 0 {
		in.Eligibility = &campaigns.EligibilityInput{SKUs: skus}
	}
	return e.posCampaign(tb, in)
}

// posReq is a request to the POS interface.
type posReq struct {
	method      string     // POST when empty
	path        string     // after /api/v1/tenants/{tenantId}
	tenant      string     // the env's tenant when empty
	body        any        // nil: none; string or []byte: raw; anything else: JSON
	creds       *[2]string // nil: the env's POS client
	noAuth      bool       // send no Authorization header
	contentType string     // application/json when empty and there is a body; "-" sends none
	headers     []string   // name, value pairs
}

// posResp is an answer of the point-of-sale interface, with the path and
// the X-Correlation-Id sent.
type posResp struct {
	apiResp
	path        string
	correlation string
}

// posBuild makes the http.Request of q against base (a server URL, or ""
// for a request handed to the handler).
func (e *posEnv) posBuild(t testing.TB, base string, q posReq) (*http.Request, string) {
	t.Helper()
	method := q.method
	if method == "" {
		method = http.MethodPost
	}
	tenant := q.tenant
	if tenant == "" {
		tenant = e.tenantID
	}
	path := "/api/v1/tenants/" + tenant + q.path
	var rd io.Reader
	switch b := q.body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		require.NoError(t, err)
		rd = bytes.NewReader(raw)
	}
	var req *http.Request
	if base == "" {
		req = httptest.NewRequest(method, path, rd)
	} else {
		var err error
		req, err = http.NewRequest(method, base+path, rd)
		require.NoError(t, err)
	}
	switch ct := q.contentType; {
	case ct == "-":
	case ct != "":
		req.Header.Set("Content-Type", ct)
	case q.body != nil:
		req.Header.Set("Content-Type", "application/json")
	}
	switch {
	case q.noAuth:
	case q.creds != nil:
		req.SetBasicAuth(q.creds[0], q.creds[1])
	default:
		req.SetBasicAuth(e.clientID, e.secret)
	}
	for i := 0; i+1 < len(q.headers); i += 2 {
		req.Header.Set(q.headers[i], q.headers[i+1])
	}
	return req, path
}

// posDo sends q to the server.
func (e *posEnv) posDo(t testing.TB, q posReq) posResp {
	t.Helper()
	req, _ := e.posBuild(t, e.srv.URL, q)
	path := req.URL.EscapedPath()
	res, err := e.srv.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return posResp{apiResp: apiResp{status: res.StatusCode, header: res.Header, body: body}, path: path,
		correlation: req.Header.Get("X-Correlation-Id")}
}

// posPost sends a JSON body to a POS path.
func (e *posEnv) posPost(t testing.TB, path string, body any, headers ...string) posResp {
	t.Helper()
	return e.posDo(t, posReq{path: path, body: body, headers: headers})
}

func (e *posEnv) posGet(t testing.TB, path string) posResp {
	t.Helper()
	return e.posDo(t, posReq{method: http.MethodGet, path: path})
}

// posRequireProblem checks an RFC 9457 problem: status, content type,
// type /problems/<id>, title, detail, instance, no other keys, and, for
// validation errors, that errors names every field of fields.
func posRequireProblem(t testing.TB, r posResp, status int, id string, fields ...string) map[string]any {
	t.Helper()
	require.Equal(t, status, r.status, "%s", r.body)
	require.Equal(t, "application/problem+json", r.header.Get("Content-Type"), "%s", r.body)
	m := r.obj(t)
	for _, k := range sortedKeys(m) {
		require.Contains(t, []string{"type", "title", "status", "detail", "instance", "correlationId", "errors"}, k, "%s", r.body)
	}
	require.Equal(t, "/problems/"+id, m["type"], "%s", r.body)
	require.NotEmpty(t, m["title"], "%s", r.body)
	require.Equal(t, json.Number(strconv.Itoa(status)), m["status"], "%s", r.body)
	require.NotEmpty(t, m["detail"], "%s", r.body)
	require.Equal(t, r.path, m["instance"], "%s", r.body)
	if r.correlation == "" {
		require.NotContains(t, m, "correlationId", "%s", r.body)
	} else {
		require.Equal(t, r.correlation, m["correlationId"], "%s", r.body)
		require.Equal(t, r.correlation, r.header.Get("X-Correlation-Id"))
	}
	if status == http.StatusUnauthorized {
		require.Contains(t, r.header.Get("WWW-Authenticate"), "Basic")
	}
	var got []string
	if errs, ok := m["errors"]; ok {
		for _, fe := range errs.([]any) {
			fm := fe.(map[string]any)
			require.Equal(t, []string{"field", "message"}, sortedKeys(fm), "%s", r.body)
			require.NotEmpty(t, fm["message"], "%s", r.body)
			got = append(got, fm["field"].(string))
		}
	}
	for _, f := range fields {
		require.Contains(t, got, f, "%s", r.body)
	}
	if len(fields) > 0 {
		require.Equal(t, "validation-error", id)
	}
	return m
}

// posCount counts the rows of a table.
func (e *posEnv) posCount(t testing.TB, table string) int {
	t.Helper()
	var n int
	require.NoError(t, e.db.SQL.QueryRow(`SELECT count(*) FROM `+table).Scan(&n))
	return n
}

// posCounts counts the rows of every table a POS call could write.
func (e *posEnv) posCounts(t testing.TB) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, table := range []string{"customers", "sales", "sale_items", "sale_payments", "redemptions", "events",
		"points_entries", "points_lots", "validation_tokens", "idempotency_keys", "campaigns", "river_job"} {
		out[table] = e.posCount(t, table)
	}
	var used int
	require.NoError(t, e.db.SQL.QueryRow(`SELECT coalesce(sum(redemptions_count), 0) FROM campaigns`).Scan(&used))
	out["campaigns.redemptions_count"] = used
	return out
}

// posNorm rewrites every json.Number in v as its shortest decimal, so
// 10.00 and 10 compare equal.
func posNorm(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			out[k] = posNorm(val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = posNorm(val)
		}
		return out
	case []map[string]any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = posNorm(val)
		}
		return out
	case json.Number:
		return json.Number(decimal.RequireFromString(string(x)).String())
	}
	return v
}

// posSet sets the value at a dotted path (array indexes as numbers) of a
// JSON-shaped map; posDelete removes it.
func posSet(m map[string]any, path string, v any) map[string]any {
	posWalk(m, path, func(parent any, key string) {
		switch p := parent.(type) {
		case map[string]any:
			p[key] = v
		case []any:
			i, _ := strconv.Atoi(key)
			p[i] = v
		}
	})
	return m
}

func posDelete(m map[string]any, path string) map[string]any {
	posWalk(m, path, func(parent any, key string) { delete(parent.(map[string]any), key) })
	return m
}

func posWalk(m map[string]any, path string, fn func(parent any, key string)) {
	parts := strings.Split(path, ".")
	var cur any = m
	for _, p := range parts[:len(parts)-1] {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[p]
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil {
				panic(path)
			}
			cur = c[i]
		}
	}
	fn(cur, parts[len(parts)-1])
}

// posN is a JSON number written exactly as s.
func posN(s string) json.Number { return json.Number(s) }

// ---------------------------------------------------------------------------
// Identify
