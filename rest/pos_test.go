package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/event"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/redemption"
	"github.com/fideliza/fideliza/ent/sale"
	"github.com/fideliza/fideliza/ent/schema/sealed"
	"github.com/fideliza/fideliza/ent/schema/viewer"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/ratelimit"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/worker"
)

// The tests of the tenant point-of-sale interface (pos-tenant-interface.md):
// a real server over a real database (SQLite, and PostgreSQL when
// FIDELIZA_TEST_DATABASE_URL is set) called with the HTTP Basic credentials
// of a real POS client. Every helper is prefixed with pos: the package has
// other fixtures.

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
	_, err := e.app.CreateStore(posSys(), e.tenantID, posStore, "Loja Centro")
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
func (e *posEnv) posSettings(t *testing.T, s app.TenantSettings) {
	t.Helper()
	_, err := e.app.UpdateTenant(posSys(), e.tenantID, s)
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
		return posCPFCheck(base)
	}
}

// posCPFCheck appends the two check digits to a 9-digit base.
func posCPFCheck(base string) string {
	digit := func(s string) byte {
		sum := 0
		for i := range len(s) {
			sum += int(s[i]-'0') * (len(s) + 1 - i)
		}
		return byte('0' + sum*10%11%10)
	}
	s := base + string(digit(base))
	return s + string(digit(s))
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
func (e *posEnv) posCampaign(tb testing.TB, in app.CampaignInput) string {
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
	c, err := e.app.CreateCampaign(e.posTenantCtx(), in)
	require.NoError(tb, err)
	return c.ID
}

// posPercent is a percentage discount campaign for channels, narrowed to
// skus when given.
func (e *posEnv) posPercent(tb testing.TB, name, pct string, channels []string, skus ...string) string {
	tb.Helper()
	in := app.CampaignInput{Name: name, Channels: channels,
		Discount: &app.DiscountInput{Mode: "percentage", Value: posDecPtr(pct)}}
	if len(skus) > 0 {
		in.Eligibility = &app.EligibilityInput{SKUs: skus}
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

type posResp struct {
	path        string
	status      int
	header      http.Header
	body        []byte
	correlation string // the X-Correlation-Id sent
}

// obj decodes the body as one JSON object, numbers as json.Number.
func (r posResp) obj(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&m), "body: %s", r.body)
	return m
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
	return posResp{path: path, status: res.StatusCode, header: res.Header, body: body,
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

func posKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// posRequireProblem checks an RFC 9457 problem: status, content type,
// type /problems/<id>, title, detail, instance, no other keys, and, for
// validation errors, that errors names every field of fields.
func posRequireProblem(t testing.TB, r posResp, status int, id string, fields ...string) map[string]any {
	t.Helper()
	require.Equal(t, status, r.status, "%s", r.body)
	require.Equal(t, "application/problem+json", r.header.Get("Content-Type"), "%s", r.body)
	m := r.obj(t)
	for _, k := range posKeys(m) {
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
			require.Equal(t, []string{"field", "message"}, posKeys(fm), "%s", r.body)
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

func posIdentifyBody(session, id, typ string) map[string]any {
	return map[string]any{
		"sessionId": session, "protocol": "PARTNER",
		"customer": map[string]any{"id": id, "type": typ},
		"store":    map[string]any{"id": posStore, "posId": "PDV-01", "employeeId": "OP-7"},
	}
}

func TestPOSIdentify(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db)
		require.NoError(t, e.db.Ent.Tenant.UpdateOneID(e.tenantID).SetPriceCodeBronze(5).SetPriceCodeSilver(10).
			SetPriceCodeGold(30).SetPriceCodeDiamond(40).Exec(posSys()))
		complete, incomplete, unknown := posCPF(), posCPF(), posCPF()
		e.posCustomer(t, complete, posCust{name: "Ana Maria Souza", email: "ana@example.com", phone: "+5511987654321",
			birth: "1990-05-17", externalID: "CRM-0042", level: customer.LevelGold})
		e.posCustomer(t, incomplete, posCust{name: "Bruno", email: "bruno@example.com", level: customer.LevelSilver})
		e.posCustomer(t, posCNPJAlfa, posCust{typ: customer.DocumentTypeCNPJ, name: "Mercado Exemplo Ltda",
			email: "compras@exemplo.com.br", phone: "+551133334444", birth: "2001-02-03", level: customer.LevelDiamond})
		bronze := posCPF()
		e.posCustomer(t, bronze, posCust{name: "Carla Dias", phone: "+5521999990000"})
		customers := e.posCount(t, "customers")

		cases := []struct {
			name, id, typ string
			want          map[string]any
			priceCode     int
		}{
			{"COMPLETE, CPF formatted", posFormatCPF(complete), "CPF", map[string]any{
				"id": complete, "type": "CPF", "status": "COMPLETE", "externalCode": "CRM-0042",
				"firstName": "Ana", "lastName": "Maria Souza", "phone": "+5511987654321", "email": "ana@example.com",
				"classification": map[string]any{"code": posN("3"), "description": "gold"},
			}, 30},
			{"INCOMPLETE, CPF digits, type in lower case", incomplete, "cpf", map[string]any{
				"id": incomplete, "type": "CPF", "status": "INCOMPLETE", "firstName": "Bruno", "email": "bruno@example.com",
				"classification": map[string]any{"code": posN("2"), "description": "silver"},
			}, 10},
			{"INCOMPLETE bronze: null fields omitted", bronze, "CPF", map[string]any{
				"id": bronze, "type": "CPF", "status": "INCOMPLETE", "firstName": "Carla", "lastName": "Dias",
				"phone": "+5521999990000", "classification": map[string]any{"code": posN("1"), "description": "bronze"},
			}, 5},
			{"alphanumeric CNPJ formatted", "12.ABC.345/01DE-35", "CNPJ", map[string]any{
				"id": posCNPJAlfa, "type": "CNPJ", "status": "COMPLETE", "firstName": "Mercado", "lastName": "Exemplo Ltda",
				"phone": "+551133334444", "email": "compras@exemplo.com.br",
				"classification": map[string]any{"code": posN("4"), "description": "diamond"},
			}, 40},
			{"alphanumeric CNPJ in lower case, unformatted", "12abc34501de35", "CNPJ", map[string]any{
				"id": posCNPJAlfa, "type": "CNPJ", "status": "COMPLETE", "firstName": "Mercado", "lastName": "Exemplo Ltda",
				"phone": "+551133334444", "email": "compras@exemplo.com.br",
				"classification": map[string]any{"code": posN("4"), "description": "diamond"},
			}, 40},
			{"NOT_FOUND CPF", posFormatCPF(unknown), "CPF", map[string]any{"id": unknown, "type": "CPF", "status": "NOT_FOUND"}, 0},
			{"NOT_FOUND numeric CNPJ", "11.222.333/0001-81", "CNPJ", map[string]any{"id": "11222333000181", "type": "CNPJ", "status": "NOT_FOUND"}, 0},
		}
		for i, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				session := "sess-" + strconv.Itoa(i)
				r := e.posPost(t, "/customers/identify", posIdentifyBody(session, c.id, c.typ))
				require.Equal(t, http.StatusOK, r.status, "%s", r.body)
				require.Equal(t, "application/json", r.header.Get("Content-Type"))
				require.Equal(t, map[string]any{
					"sessionId": session, "customer": c.want, "priceCode": posN(strconv.Itoa(c.priceCode)),
				}, r.obj(t), "the whole answer: absent fields are omitted, never null")
				require.NotContains(t, string(r.body), "null")
			})
		}
		require.Equal(t, customers, e.posCount(t, "customers"), "NOT_FOUND creates nothing while pre-registration is off")

		t.Run("only the required fields", func(t *testing.T) {
			r := e.posPost(t, "/customers/identify", map[string]any{"sessionId": "s", "customer": map[string]any{"id": complete, "type": "CPF"}})
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			require.Equal(t, "COMPLETE", r.obj(t)["customer"].(map[string]any)["status"])
		})

		t.Run("PRE_REGISTER when the tenant enables pre-registration", func(t *testing.T) {
			e.posSettings(t, app.TenantSettings{PreRegistration: posBool(true)})
			defer e.posSettings(t, app.TenantSettings{PreRegistration: posBool(false)})
			fresh := posCPF()
			body := posIdentifyBody("sess-pre", posFormatCPF(fresh), "CPF")
			body["customer"].(map[string]any)["phone"] = "11987650000"
			want := map[string]any{
				"sessionId": "sess-pre", "priceCode": posN("5"),
				"customer": map[string]any{"id": fresh, "type": "CPF", "status": "PRE_REGISTER", "phone": "+5511987650000",
					"classification": map[string]any{"code": posN("1"), "description": "bronze"}},
			}
			for range 2 {
				r := e.posPost(t, "/customers/identify", body)
				require.Equal(t, http.StatusOK, r.status, "%s", r.body)
				require.Equal(t, want, r.obj(t))
			}
			stored, err := e.db.Ent.Customer.Query().Where(customer.DocumentIndex(sealed.MustIndex(fresh))).Only(posSys())
			require.NoError(t, err, "pre-registered once, whatever the number of identifications")
			require.Equal(t, e.tenantID, stored.TenantID)
			require.Empty(t, stored.Name)
			require.Equal(t, "+5511987650000", *stored.Phone)
			require.Equal(t, customer.DocumentTypeCPF, stored.DocumentType)

			t.Run("without a phone", func(t *testing.T) {
				other := posCPF()
				r := e.posPost(t, "/customers/identify", posIdentifyBody("s2", other, "CPF"))
				require.Equal(t, http.StatusOK, r.status, "%s", r.body)
				c := r.obj(t)["customer"].(map[string]any)
				require.Equal(t, []string{"classification", "id", "status", "type"}, posKeys(c))
				require.Equal(t, "PRE_REGISTER", c["status"])
			})
			t.Run("a CNPJ", func(t *testing.T) {
				cnpj := posCNPJCheck("AB1CD2EF3G00")
				r := e.posPost(t, "/customers/identify", posIdentifyBody("s3", cnpj, "CNPJ"))
				require.Equal(t, http.StatusOK, r.status, "%s", r.body)
				require.Equal(t, "PRE_REGISTER", r.obj(t)["customer"].(map[string]any)["status"])
				stored, err := e.db.Ent.Customer.Query().Where(customer.DocumentIndex(sealed.MustIndex(cnpj))).Only(posSys())
				require.NoError(t, err)
				require.Equal(t, customer.DocumentTypeCNPJ, stored.DocumentType)
			})
			t.Run("a known customer keeps its status", func(t *testing.T) {
				r := e.posPost(t, "/customers/identify", posIdentifyBody("s4", complete, "CPF"))
				require.Equal(t, "COMPLETE", r.obj(t)["customer"].(map[string]any)["status"])
			})
		})
	})
}

func TestPOSIdentifyValidation(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db)
		// With pre-registration on, a document that passed validation by
		// mistake would be stored: nothing may be.
		e.posSettings(t, app.TenantSettings{PreRegistration: posBool(true)})
		valid := posCPF()
		body := func() map[string]any { return posIdentifyBody("sess-1", valid, "CPF") }
		cases := []struct {
			name  string
			body  any
			field string
		}{
			{"sessionId missing", posDelete(body(), "sessionId"), "sessionId"},
			{"sessionId blank", posSet(body(), "sessionId", "   "), "sessionId"},
			{"sessionId not a string", posSet(body(), "sessionId", 42), "sessionId"},
			{"customer missing", posDelete(body(), "customer"), "customer"},
			{"customer null", posSet(body(), "customer", nil), "customer"},
			{"customer not an object", posSet(body(), "customer", "52998224725"), "customer"},
			{"customer.id missing", posDelete(body(), "customer.id"), "customer.id"},
			{"customer.id empty", posSet(body(), "customer.id", ""), "customer.id"},
			{"customer.id a number", posSet(body(), "customer.id", 52998224725), "customer.id"},
			{"customer.type missing", posDelete(body(), "customer.type"), "customer.type"},
			{"customer.id over 18 characters", posSet(body(), "customer.id", "000000000"+posFormatCPF(valid)), "customer.id"},
			{"customer.id with spaces inside", posSet(body(), "customer.id", valid[:3]+" "+valid[3:]), "customer.id"},
			{"customer.type over 10 characters", posSet(body(), "customer.type", "CPFCPFCPFCPF"), "customer.type"},
			{"customer.type not CPF or CNPJ", posSet(body(), "customer.type", "RG"), "customer.type"},
			{"invalid CPF check digits", posSet(body(), "customer.id", valid[:10]+string('0'+(valid[10]-'0'+1)%10)), "customer.id"},
			{"CPF of repeated digits", posSet(body(), "customer.id", "111.111.111-11"), "customer.id"},
			{"CPF too short", posSet(body(), "customer.id", "5299822472"), "customer.id"},
			{"CPF with letters", posSet(body(), "customer.id", "529982247AB"), "customer.id"},
			{"CPF sent as CNPJ", posSet(body(), "customer.type", "CNPJ"), "customer.id"},
			{"invalid CNPJ check digits", posSet(posSet(body(), "customer.type", "CNPJ"), "customer.id", "11.222.333/0001-82"), "customer.id"},
			{"invalid alphanumeric CNPJ", posSet(posSet(body(), "customer.type", "CNPJ"), "customer.id", "12.ABC.345/01DE-36"), "customer.id"},
			{"CNPJ with letters in the check digits", posSet(posSet(body(), "customer.type", "CNPJ"), "customer.id", "12ABC34501DEAB"), "customer.id"},
			{"phone not a number", posSet(body(), "customer.phone", "call me"), "customer.phone"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				posRequireProblem(t, e.posPost(t, "/customers/identify", c.body), http.StatusBadRequest, "validation-error", c.field)
			})
		}
		for _, raw := range []string{`{"sessionId":`, `not json`, `[]`, `"x"`, `{"sessionId":"a"} {"x":1}`, `{"sessionId":"a"}]`, ``} {
			t.Run("malformed "+raw, func(t *testing.T) {
				posRequireProblem(t, e.posPost(t, "/customers/identify", raw), http.StatusBadRequest, "validation-error")
			})
		}
		require.Equal(t, 0, e.posCount(t, "customers"), "no invalid request pre-registered anyone")
	})
}

// ---------------------------------------------------------------------------
// Authentication, tenancy and the problem format

// posRoutes are the POS operations with a body each accepts.
func posRoutes() []posReq {
	return []posReq{
		{path: "/customers/identify", body: posIdentifyBody("s", "52998224725", "CPF")},
		{path: "/discounts/authorizations", body: posAuthorizeBody(nil, posItem("1", posGTINA, "10.00", "1"))},
		{path: "/discounts/authorize", body: posAuthorizeBody(nil, posItem("1", posGTINA, "10.00", "1"))},
		{path: "/sales", body: posSaleBody(posN("9001"), nil)},
		{method: http.MethodGet, path: "/sales/9001"},
	}
}

func TestPOSAuthentication(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		// Dozens of refusals from one address: more than its quota of
		// failed authentications (ratelimit_test.go tests that quota).
		e := posSetup(t, db, func(a *ServerSetup) { a.RateLimits.AuthFailures = ratelimit.Quota{Off: true} })
		other, err := e.app.CreateTenant(posSys(), "Outra Rede", nil)
		require.NoError(t, err)
		otherPOS, err := e.app.CreateClient(posSys(), other.ID, apiclient.KindPos, "caixa da outra", nil)
		require.NoError(t, err)
		oauth, err := e.app.CreateClient(posSys(), e.tenantID, apiclient.KindOauth, "integração", nil)
		require.NoError(t, err)
		rotated, err := e.app.CreateClient(posSys(), e.tenantID, apiclient.KindPos, "caixa 2", nil)
		require.NoError(t, err)
		renewed, err := e.app.RotateClient(posSys(), rotated.Client.ID)
		require.NoError(t, err)
		require.NotEqual(t, rotated.Secret, renewed.Secret)
		token, err := e.app.Auth.IssueToken(context.Background(), auth.TokenRequest{
			GrantType: "client_credentials", ClientID: oauth.Client.ID, ClientSecret: oauth.Secret,
		})
		require.NoError(t, err)

		for _, route := range posRoutes() {
			name := posOr(route.method, http.MethodPost) + " " + route.path
			t.Run(name, func(t *testing.T) {
				refused := []struct {
					name string
					q    posReq
				}{
					{"no credentials", posReq{noAuth: true}},
					{"unknown client", posReq{creds: &[2]string{"cli_unknown", e.secret}}},
					{"wrong secret", posReq{creds: &[2]string{e.clientID, e.secret + "x"}}},
					{"empty secret", posReq{creds: &[2]string{e.clientID, ""}}},
					{"revoked secret (rotated)", posReq{creds: &[2]string{rotated.Client.ID, rotated.Secret}}},
					{"another tenant's POS client", posReq{creds: &[2]string{otherPOS.Client.ID, otherPOS.Secret}}},
					{"an OAuth client of the tenant", posReq{creds: &[2]string{oauth.Client.ID, oauth.Secret}}},
					{"a bearer token", posReq{noAuth: true, headers: []string{"Authorization", "Bearer " + token.AccessToken}}},
					{"not base64", posReq{noAuth: true, headers: []string{"Authorization", "Basic %%%"}}},
					{"a client id that is not UTF-8", posReq{creds: &[2]string{"cli_\xff\xfe", e.secret}}},
					{"a client id with NUL", posReq{creds: &[2]string{"cli_\x00", e.secret}}},
				}
				var first []byte
				for _, c := range refused {
					q := c.q
					q.method, q.path, q.body = route.method, route.path, route.body
					r := e.posDo(t, q)
					posRequireProblem(t, r, http.StatusUnauthorized, "unauthorized")
					if first == nil {
						first = r.body
					}
					require.Equal(t, string(first), string(r.body), "%s: every refusal has the same body", c.name)
				}

				// The renewed secret of the rotated client works.
				q := route
				q.creds = &[2]string{rotated.Client.ID, renewed.Secret}
				r := e.posDo(t, q)
				require.Less(t, r.status, 500, "%s", r.body)
				require.NotEqual(t, http.StatusUnauthorized, r.status, "%s", r.body)

				// tenantId is checked first: 400 even without credentials.
				for _, bad := range []string{"not-a-uuid", "12345", "{" + e.tenantID + "}", "urn:uuid:" + e.tenantID, e.tenantID + "0"} {
					for _, noAuth := range []bool{true, false} {
						q := route
						q.tenant, q.noAuth = bad, noAuth
						r := e.posDo(t, q)
						posRequireProblem(t, r, http.StatusBadRequest, "validation-error", "tenantId")
					}
				}
				// An upper-case UUID is the same tenant.
				q = route
				q.tenant = strings.ToUpper(e.tenantID)
				r = e.posDo(t, q)
				require.NotEqual(t, http.StatusUnauthorized, r.status, "%s", r.body)
				require.NotEqual(t, http.StatusBadRequest, r.status, "%s", r.body)

				// Credentials of tenant A on tenant B's path: 401.
				q = route
				q.tenant = other.ID
				posRequireProblem(t, e.posDo(t, q), http.StatusUnauthorized, "unauthorized")
				// Genuine credentials on the path of a tenant that does not
				// exist: 404 (TestPOSTenantChecks walks the whole order).
				q.tenant = "9b2f5a3e-0c1d-4e7f-8a9b-0c1d2e3f4a5b"
				posRequireProblem(t, e.posDo(t, q), http.StatusNotFound, "tenant-not-found")
			})
		}

		t.Run("inactive tenant", func(t *testing.T) {
			e.posSettings(t, app.TenantSettings{Active: posBool(false)})
			defer e.posSettings(t, app.TenantSettings{Active: posBool(true)})
			for _, route := range posRoutes() {
				r := e.posDo(t, route)
				posRequireProblem(t, r, http.StatusNotFound, "tenant-not-found")
				// The credentials are checked before the tenant's state.
				q := route
				q.creds = &[2]string{e.clientID, "wrong"}
				posRequireProblem(t, e.posDo(t, q), http.StatusUnauthorized, "unauthorized")
				q = route
				q.body = "not json"
				posRequireProblem(t, e.posDo(t, q), http.StatusNotFound, "tenant-not-found")
			}
		})
	})
}

func posOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func TestPOSProblems(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db)
		const corr = "2f0c6d0e-8f43-4c57-9a1e-5b8a1d0c7e11"

		t.Run("correlation id echoed in header and body", func(t *testing.T) {
			r := e.posPost(t, "/customers/identify", map[string]any{"sessionId": "s"}, "X-Correlation-Id", corr)
			m := posRequireProblem(t, r, http.StatusBadRequest, "validation-error", "customer")
			require.Equal(t, corr, m["correlationId"])
			require.Equal(t, corr, r.header.Get("X-Correlation-Id"))

			r = e.posDo(t, posReq{path: "/customers/identify", body: "{}", noAuth: true, headers: []string{"X-Correlation-Id", corr}})
			posRequireProblem(t, r, http.StatusUnauthorized, "unauthorized")
			r = e.posDo(t, posReq{path: "/customers/identify", tenant: "x", body: "{}", headers: []string{"X-Correlation-Id", corr}})
			posRequireProblem(t, r, http.StatusBadRequest, "validation-error", "tenantId")

			r = e.posPost(t, "/customers/identify", posIdentifyBody("s", posCPF(), "CPF"), "X-Correlation-Id", corr)
			require.Equal(t, http.StatusOK, r.status)
			require.Equal(t, corr, r.header.Get("X-Correlation-Id"), "echoed on success too")

			r = e.posPost(t, "/customers/identify", map[string]any{"sessionId": "s"})
			m = posRequireProblem(t, r, http.StatusBadRequest, "validation-error", "customer")
			require.NotContains(t, m, "correlationId", "only when the caller sent one")
			require.Empty(t, r.header.Get("X-Correlation-Id"))
		})

		t.Run("404 and 405 inside the POS paths", func(t *testing.T) {
			for _, path := range []string{"/unknown", "/customers", "/customers/identify/x", "/discounts", "/sales/1/items"} {
				r := e.posDo(t, posReq{path: path, body: "{}", headers: []string{"X-Correlation-Id", corr}})
				posRequireProblem(t, r, http.StatusNotFound, "resource-not-found")
			}
			for _, c := range []struct {
				q     posReq
				allow string // RFC 9110 §15.5.6: the methods the path serves
			}{
				{posReq{method: http.MethodGet, path: "/customers/identify"}, "POST"},
				{posReq{method: http.MethodPut, path: "/sales", body: "{}"}, "POST"},
				{posReq{method: http.MethodDelete, path: "/sales/1"}, "GET"},
				{posReq{method: http.MethodGet, path: "/discounts/authorize"}, "POST"},
				{posReq{method: http.MethodPatch, path: "/discounts/authorizations", body: "{}"}, "POST"},
			} {
				r := e.posDo(t, c.q)
				posRequireProblem(t, r, http.StatusMethodNotAllowed, "method-not-allowed")
				require.Equal(t, c.allow, r.header.Get("Allow"), "%s %s", c.q.method, c.q.path)
			}
		})

		t.Run("415 for a body that is not JSON", func(t *testing.T) {
			for _, route := range posRoutes()[:4] {
				for _, ct := range []string{"text/plain", "application/xml", "application/x-www-form-urlencoded", "-", "application/json;;"} {
					q := route
					q.contentType = ct
					posRequireProblem(t, e.posDo(t, q), http.StatusUnsupportedMediaType, "unsupported-media-type")
				}
				q := route
				q.contentType = "application/json; charset=utf-8"
				r := e.posDo(t, q)
				require.Less(t, r.status, 300, "%s", r.body)
			}
		})

		t.Run("413 for a body over 2 MiB", func(t *testing.T) {
			for _, route := range posRoutes()[:4] {
				raw, err := json.Marshal(route.body)
				require.NoError(t, err)
				big := append(raw[:len(raw)-1:len(raw)-1], []byte(`,"padding":"`+strings.Repeat("x", 2<<20)+`"}`)...)
				q := route
				q.body = big
				posRequireProblem(t, e.posDo(t, q), http.StatusRequestEntityTooLarge, "payload-too-large")
				// White space counts as well.
				q.body = append(bytes.Repeat([]byte(" "), 2<<20), raw...)
				posRequireProblem(t, e.posDo(t, q), http.StatusRequestEntityTooLarge, "payload-too-large")
			}
		})

		t.Run("a sale of 1,000 items up to 2 MiB fits", func(t *testing.T) {
			body := posSaleBody(posN("4242"), nil)
			items := make([]any, 1000)
			for i := range items {
				items[i] = map[string]any{"id": strconv.Itoa(i + 1), "gtin": posGTINA, "description": strings.Repeat("d", 1500),
					"unitPrice": posN("0.10"), "quantity": posN("1"), "discounts": []any{}}
			}
			posSet(body, "sale.items", items)
			posSet(body, "sale.amount", posN("100.00"))
			raw, err := json.Marshal(body)
			require.NoError(t, err)
			require.Greater(t, len(raw), 3<<19, "over 1.5 MiB")
			require.Less(t, len(raw), 2<<20)
			items0 := e.posCount(t, "sale_items")
			r := e.posPost(t, "/sales", raw)
			require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
			require.Equal(t, items0+1000, e.posCount(t, "sale_items"))
		})

		t.Run("NUL in a string is refused, not stored", func(t *testing.T) {
			for _, raw := range []string{
				`{"protocol":"PARTNER_V1","sale":{"id":1,"store":{"id":"LJ001\u0000","posId":"1"}}}`,
				strings.Replace(string(posJSON(t, posSaleBody(posN("4343"), nil))), `"Arroz 5 kg"`, `"Arroz\u00005 kg"`, 1),
				strings.Replace(string(posJSON(t, posSaleBody(posN("4344"), nil))), `"PDV-01"`, `"PDV\u0000"`, 1),
			} {
				posRequireProblem(t, e.posPost(t, "/sales", raw), http.StatusBadRequest, "validation-error")
			}
			r := e.posPost(t, "/customers/identify", `{"sessionId":"a\u0000","customer":{"id":"52998224725","type":"CPF"}}`)
			posRequireProblem(t, r, http.StatusBadRequest, "validation-error")
			// An escaped backslash followed by u0000 is text, not NUL.
			body := strings.Replace(string(posJSON(t, posSaleBody(posN("4345"), nil))), `"Arroz 5 kg"`, `"Arroz \\u0000"`, 1)
			r = e.posPost(t, "/sales", body)
			require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
		})
	})
}

func posJSON(t testing.TB, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	require.NoError(t, err)
	return raw
}

// ---------------------------------------------------------------------------
// Authorize discounts

func posItem(id, gtin, unitPrice, quantity string, kv ...any) map[string]any {
	m := map[string]any{"id": id, "gtin": gtin, "unitPrice": posN(unitPrice), "unitMeasure": "UN",
		"quantity": posN(quantity), "ignoreDiscount": false, "discounts": []any{}}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// posExternal is a discount the point of sale gave itself.
func posExternal(unitDiscount, unitPriceWithDiscount, quantity string) map[string]any {
	return map[string]any{"promotionId": "PARCEIRO-77", "partnerPromotionId": "0", "unitDiscount": posN(unitDiscount),
		"unitPriceWithDiscount": posN(unitPriceWithDiscount), "quantity": posN(quantity)}
}

func posAuthorizeBody(cust any, items ...map[string]any) map[string]any {
	list := make([]any, len(items))
	for i, it := range items {
		list[i] = it
	}
	m := map[string]any{
		"sessionId": "sess-auth", "protocol": "PARTNER",
		"sale": map[string]any{
			"id": "TK-991", "store": map[string]any{"id": posStore, "posId": "PDV-01", "employeeId": "OP-7"},
			"date": posDate, "amount": posN("54.00"), "ignoreDiscount": false, "items": list,
		},
	}
	if cust != nil {
		m["customer"] = cust
	}
	return m
}

// posDecimals matches a JSON number of at most 8 decimal places.
var posDecimals = regexp.MustCompile(`^-?\d+(\.\d{1,8})?$`)

// posRequireDecimals checks every number of the answer's discounts has at
// most 8 decimal places, reading the raw body.
func posRequireDecimals(t testing.TB, r posResp) {
	t.Helper()
	var raw struct {
		Sale struct {
			Items []struct {
				UnitPrice json.RawMessage
				Quantity  json.RawMessage
				Discounts []map[string]json.RawMessage
			}
		}
	}
	require.NoError(t, json.Unmarshal(r.body, &raw))
	for _, it := range raw.Sale.Items {
		for _, n := range []json.RawMessage{it.UnitPrice, it.Quantity} {
			require.Regexp(t, posDecimals, string(n))
		}
		for _, d := range it.Discounts {
			for _, k := range []string{"unitDiscount", "unitPriceWithDiscount", "quantity"} {
				if v, ok := d[k]; ok {
					require.Regexp(t, posDecimals, string(v), "%s of %s", k, r.body)
				}
			}
		}
	}
}

func TestPOSAuthorize(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db)
		doc := posCPF()
		e.posCustomer(t, doc, posCust{name: "Ana Souza", email: "ana@example.com", phone: "+5511987654321", birth: "1990-01-01"})
		pre := posCPF()
		e.posCustomer(t, pre, posCust{phone: "+5511900000000"}) // pre-registered: no name
		c10 := e.posPercent(t, "Dez por cento no PDV", "10", []string{"pdv"})
		c20 := e.posPercent(t, "Vinte no feijão", "20", []string{"pdv"}, posGTINB)
		c33 := e.posPercent(t, "Um terço na granel", "33.333", []string{"pdv"}, posGTINE)
		e.posPercent(t, "Metade só na loja virtual", "50", []string{"ecommerce"})
		e.posCampaign(t, app.CampaignInput{Name: "Pontos em dobro", Type: "bonus_points", Channels: []string{"pdv"},
			Discount: &app.DiscountInput{Multiplier: posDecPtr("2")}})
		e.posCampaign(t, app.CampaignInput{Name: "Frete grátis", Channels: []string{"pdv"},
			Discount: &app.DiscountInput{Mode: "free_shipping"}})
		pausedStart := time.Now().Add(time.Hour)
		e.posCampaign(t, app.CampaignInput{Name: "Ainda não começou", Channels: []string{"pdv"}, StartsAt: &pausedStart,
			Discount: &app.DiscountInput{Mode: "percentage", Value: posDecPtr("90")}})

		cart := func() []map[string]any {
			return []map[string]any{
				posItem("1", posGTINA, "10.00", "2"),
				posItem("2", posGTINB, "5.00", "1"),
				posItem("3", posGTINC, "3.00", "1", "ignoreDiscount", true),
				posItem("4", posGTIND, "10.00", "1", "discounts", []any{posExternal("1.00", "9.00", "1")}),
				posItem("5", posGTINE, "3.99", "0.755", "unitMeasure", "KG"),
				posItem("6", posGTINF, "2.00", "1", "discounts", []any{posExternal("2.00", "0", "1")}),
			}
		}
		external := func(unit, after string) map[string]any {
			return map[string]any{"promotionId": nil, "partnerPromotionId": "0", "unitDiscount": posN(unit),
				"unitPriceWithDiscount": posN(after), "quantity": posN("1")}
		}
		service := func(id, unit, after, qty string) map[string]any {
			return map[string]any{"promotionId": id, "unitDiscount": posN(unit), "unitPriceWithDiscount": posN(after), "quantity": posN(qty)}
		}
		item := func(it map[string]any, discounts ...map[string]any) map[string]any {
			out := map[string]any{}
			for k, v := range it {
				out[k] = v
			}
			list := []any{}
			for _, d := range discounts {
				list = append(list, d)
			}
			out["discounts"] = list
			return out
		}
		in := cart()
		wantItems := []any{
			item(in[0], service(c10, "1.00", "9.00", "2")),
			item(in[1], service(c20, "1.00", "4.00", "1")), // 20% beats 10%
			item(in[2]), // ignoreDiscount: untouched
			item(in[3], external("1.00", "9.00"), service(c10, "0.90", "8.10", "1")), // on the price after the external one
			item(in[4], service(c33, "1.3299867", "2.6600133", "0.755")),             // 33.333% beats 10%
			item(in[5], external("2.00", "0")),                                       // nothing left to discount
		}

		for _, path := range []string{"/discounts/authorizations", "/discounts/authorize"} {
			t.Run(path, func(t *testing.T) {
				before := e.posCounts(t)
				r := e.posPost(t, path, posAuthorizeBody(map[string]any{"id": posFormatCPF(doc), "type": "CPF"}, cart()...))
				require.Equal(t, http.StatusOK, r.status, "%s", r.body)
				require.Equal(t, "application/json", r.header.Get("Content-Type"))
				m := r.obj(t)
				require.Equal(t, []string{"customer", "messages", "sale", "sessionId"}, posKeys(m))
				require.Equal(t, "sess-auth", m["sessionId"])
				require.Equal(t, map[string]any{"id": doc}, m["customer"])
				sl := m["sale"].(map[string]any)
				require.Equal(t, []string{"amount", "date", "items", "store", "ticketId"}, posKeys(sl))
				require.Equal(t, "TK-991", sl["ticketId"])
				require.Equal(t, posDate, sl["date"])
				require.Equal(t, posN("54.00"), sl["amount"])
				require.Equal(t, map[string]any{"id": posStore, "posId": "PDV-01", "employeeId": "OP-7"}, sl["store"])
				require.Equal(t, posNorm(wantItems), posNorm(sl["items"]), "%s", r.body)
				require.Equal(t, []any{map[string]any{"type": "SUCCESS", "content": "4 discount(s) authorized"}}, m["messages"])
				posRequireDecimals(t, r)
				require.Equal(t, before, e.posCounts(t), "authorizing stores nothing")
			})
		}

		t.Run("no discounts", func(t *testing.T) {
			plain := func() []map[string]any {
				return []map[string]any{posItem("1", posGTINA, "10.00", "2"),
					posItem("2", posGTIND, "10.00", "1", "discounts", []any{posExternal("1.00", "9.00", "1")})}
			}
			want := []any{item(plain()[0]), item(plain()[1], external("1.00", "9.00"))}
			unknown := posCPF()
			cases := []struct {
				name     string
				body     map[string]any
				customer any // the answer's customer; nil: absent
			}{
				{"no customer", posAuthorizeBody(nil, plain()...), nil},
				{"customer null", posSet(posAuthorizeBody(nil, plain()...), "customer", nil), nil},
				{"customer.id null", posAuthorizeBody(map[string]any{"id": nil}, plain()...), nil},
				{"customer.id empty", posAuthorizeBody(map[string]any{"id": "", "type": "CPF"}, plain()...), nil},
				{"unknown customer", posAuthorizeBody(map[string]any{"id": unknown, "type": "CPF"}, plain()...), map[string]any{"id": unknown}},
				{"pre-registered customer", posAuthorizeBody(map[string]any{"id": pre, "type": "CPF"}, plain()...), map[string]any{"id": pre}},
				{"sale.ignoreDiscount", posSet(posAuthorizeBody(map[string]any{"id": doc, "type": "CPF"}, plain()...), "sale.ignoreDiscount", true), map[string]any{"id": doc}},
				{"every item ignoreDiscount", posAuthorizeBody(map[string]any{"id": doc, "type": "CPF"},
					posItem("1", posGTINA, "10.00", "2", "ignoreDiscount", true)), map[string]any{"id": doc}},
				{"an item that already carries a service discount", posAuthorizeBody(map[string]any{"id": doc, "type": "CPF"},
					posItem("1", posGTINA, "10.00", "2", "discounts", []any{map[string]any{"promotionId": c10, "unitDiscount": posN("1"), "unitPriceWithDiscount": posN("9"), "quantity": posN("2")}})),
					map[string]any{"id": doc}},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					before := e.posCounts(t)
					r := e.posPost(t, "/discounts/authorizations", c.body)
					require.Equal(t, http.StatusOK, r.status, "%s", r.body)
					m := r.obj(t)
					if c.customer == nil {
						require.NotContains(t, m, "customer")
					} else {
						require.Equal(t, c.customer, m["customer"])
					}
					items := m["sale"].(map[string]any)["items"].([]any)
					switch c.name {
					case "every item ignoreDiscount":
						require.Equal(t, posNorm([]any{item(posItem("1", posGTINA, "10.00", "2", "ignoreDiscount", true))}), posNorm(items))
					case "an item that already carries a service discount":
						require.Len(t, items, 1)
						ds := items[0].(map[string]any)["discounts"].([]any)
						require.Len(t, ds, 1, "the service discount is not given twice")
						require.Equal(t, c10, ds[0].(map[string]any)["promotionId"])
					default:
						require.Equal(t, posNorm(want), posNorm(items), "the same cart, no suggested discount")
					}
					msgs := m["messages"].([]any)
					require.Len(t, msgs, 1)
					require.Equal(t, "INFO", msgs[0].(map[string]any)["type"])
					require.NotEmpty(t, msgs[0].(map[string]any)["content"])
					require.Equal(t, before, e.posCounts(t))
				})
			}
		})

		t.Run("an ecommerce-only campaign never reaches the POS", func(t *testing.T) {
			// Only the 50% campaign for ecommerce would apply to GTIN C.
			other := posSetup(t, db) // a second tenant over the same database
			cust := posCPF()
			other.posCustomer(t, cust, posCust{name: "Davi"})
			other.posPercent(t, "Só e-commerce", "50", []string{"ecommerce"})
			r := other.posPost(t, "/discounts/authorize", posAuthorizeBody(map[string]any{"id": cust, "type": "CPF"}, posItem("1", posGTINC, "8.00", "1")))
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			m := r.obj(t)
			require.Empty(t, m["sale"].(map[string]any)["items"].([]any)[0].(map[string]any)["discounts"])
			require.Equal(t, "INFO", m["messages"].([]any)[0].(map[string]any)["type"])
			// A campaign for every channel does reach it.
			all := other.posCampaign(t, app.CampaignInput{Name: "Todos os canais",
				Discount: &app.DiscountInput{Mode: "fixed_amount", Value: posDecPtr("1.50")}})
			r = other.posPost(t, "/discounts/authorize", posAuthorizeBody(map[string]any{"id": cust, "type": "CPF"}, posItem("1", posGTINC, "8.00", "2")))
			ds := r.obj(t)["sale"].(map[string]any)["items"].([]any)[0].(map[string]any)["discounts"].([]any)
			require.Equal(t, posNorm([]any{service(all, "0.75", "7.25", "2")}), posNorm(ds), "R$ 1.50 over 2 units")
			// The campaigns of the first tenant never reach the second.
			r = other.posPost(t, "/discounts/authorize", posAuthorizeBody(map[string]any{"id": doc, "type": "CPF"}, posItem("1", posGTINA, "10.00", "1")))
			require.Equal(t, "INFO", r.obj(t)["messages"].([]any)[0].(map[string]any)["type"], "%s", r.body)
		})

		t.Run("validation", func(t *testing.T) {
			body := func() map[string]any {
				return posAuthorizeBody(map[string]any{"id": doc, "type": "CPF"}, posItem("1", posGTINA, "10.00", "2"))
			}
			cases := []struct {
				name  string
				body  any
				field string
			}{
				{"sessionId missing", posDelete(body(), "sessionId"), "sessionId"},
				{"sale missing", posDelete(body(), "sale"), "sale"},
				{"sale null", posSet(body(), "sale", nil), "sale"},
				{"sale.store.id missing", posDelete(body(), "sale.store.id"), "sale.store.id"},
				{"sale.date missing", posDelete(body(), "sale.date"), "sale.date"},
				{"sale.date without offset", posSet(body(), "sale.date", "2026-03-14T10:20:30"), "sale.date"},
				{"sale.date a date only", posSet(body(), "sale.date", "2026-03-14"), "sale.date"},
				{"sale.items missing", posDelete(body(), "sale.items"), "sale.items"},
				{"sale.items empty", posSet(body(), "sale.items", []any{}), "sale.items"},
				{"sale.items not an array", posSet(body(), "sale.items", map[string]any{}), "sale.items"},
				{"gtin missing", posDelete(body(), "sale.items.0.gtin"), "sale.items[0].gtin"},
				{"unitPrice missing", posDelete(body(), "sale.items.0.unitPrice"), "sale.items[0].unitPrice"},
				{"unitPrice negative", posSet(body(), "sale.items.0.unitPrice", posN("-1")), "sale.items[0].unitPrice"},
				{"unitPrice a string", posSet(body(), "sale.items.0.unitPrice", "10.00"), "sale.items.unitPrice"},
				{"unitMeasure missing", posDelete(body(), "sale.items.0.unitMeasure"), "sale.items[0].unitMeasure"},
				{"quantity missing", posDelete(body(), "sale.items.0.quantity"), "sale.items[0].quantity"},
				{"quantity zero", posSet(body(), "sale.items.0.quantity", posN("0")), "sale.items[0].quantity"},
				{"quantity out of range", posSet(body(), "sale.items.0.quantity", posN("1e400")), "sale.items[0].quantity"},
				{"quantity with a huge exponent", posSet(body(), "sale.items.0.quantity", posN("1e999999999")), "sale.items[0].quantity"},
				{"unitPrice with a tiny exponent", posSet(body(), "sale.items.0.unitPrice", posN("1e-999999999")), "sale.items[0].unitPrice"},
				{"unitPrice of 100 digits", posSet(body(), "sale.items.0.unitPrice", posN("1"+strings.Repeat("0", 99))), "sale.items[0].unitPrice"},
				{"quantity of 100 decimals", posSet(body(), "sale.items.0.quantity", posN("0."+strings.Repeat("3", 100))), "sale.items[0].quantity"},
				{"sale.date in the year 10000 in UTC", posSet(body(), "sale.date", "9999-12-31T23:59:59-23:59"), "sale.date"},
				{"sale.amount a string", posSet(body(), "sale.amount", "54.00"), "sale.amount"},
				{"customer.type missing with an id", posDelete(body(), "customer.type"), "customer.type"},
				{"customer.type not CPF or CNPJ", posSet(body(), "customer.type", "PASSPORT"), "customer.type"},
				{"invalid CPF", posSet(body(), "customer.id", "529.982.247-24"), "customer.id"},
				{"invalid CNPJ", posSet(posSet(body(), "customer.type", "CNPJ"), "customer.id", "11.222.333/0001-80"), "customer.id"},
				{"customer.id over 18 characters", posSet(body(), "customer.id", "0000000000000000000052998224725"), "customer.id"},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					for _, path := range []string{"/discounts/authorizations", "/discounts/authorize"} {
						posRequireProblem(t, e.posPost(t, path, c.body), http.StatusBadRequest, "validation-error", c.field)
					}
				})
			}
		})
	})
}

// ---------------------------------------------------------------------------
// Register sale

// posSaleBody is a valid sale of R$ 100.00 at posStore: two lines of R$ 50.
func posSaleBody(saleID any, cust any) map[string]any {
	m := map[string]any{
		"protocol": "PARTNER_V1",
		"sale": map[string]any{
			"id":             saleID,
			"store":          map[string]any{"id": posStore, "posId": "PDV-01", "employeeId": "OP-7", "sellerId": "V-3"},
			"posProvider":    "Linx",
			"channel":        "LOJA_FISICA",
			"date":           posDate,
			"amount":         posN("100.00"),
			"amountPayable":  posN("100.00"),
			"discountAmount": posN("0"),
			"items": []any{
				map[string]any{"id": "1", "gtin": posGTINA, "description": "Arroz 5 kg", "unitPrice": posN("25.00"),
					"unitMeasure": "UN", "quantity": posN("2"), "discounts": []any{}},
				map[string]any{"id": "2", "gtin": posGTINB, "description": "Feijão 1 kg", "unitPrice": posN("12.50"),
					"unitMeasure": "UN", "quantity": posN("4"), "discounts": []any{}},
			},
			"payments": []any{map[string]any{"id": posN("1"), "amount": posN("100.00"), "method": "CREDIT_CARD",
				"bin": "411111", "nsu": "000123", "installments": 3}},
			"fiscalDocument": map[string]any{"number": "123", "serialNumber": "1", "model": "65", "type": "NFCE",
				"url": "https://sefaz.example/nfce/123"},
		},
	}
	if cust != nil {
		m["customer"] = cust
	}
	return m
}

// posDiscounted puts a discount of the service on the first line of a sale
// body (R$ 5.00 on each of its 2 units) and sets the totals.
func posDiscounted(m map[string]any, promotionID string) map[string]any {
	posSet(m, "sale.items.0.discounts", []any{map[string]any{"promotionId": promotionID, "unitDiscount": posN("5.00"),
		"unitPriceWithDiscount": posN("20.00"), "quantity": posN("2")}})
	posSet(m, "sale.discountAmount", posN("10.00"))
	posSet(m, "sale.amountPayable", posN("90.00"))
	posSet(m, "sale.payments.0.amount", posN("90.00"))
	return m
}

func posRequireAccepted(t testing.TB, r posResp, saleID string, cust map[string]any) {
	t.Helper()
	require.Equal(t, http.StatusAccepted, r.status, "%s", r.body)
	require.Equal(t, "application/json", r.header.Get("Content-Type"))
	m := r.obj(t)
	require.Equal(t, []string{"customer", "messages", "sale"}, posKeys(m), "%s", r.body)
	require.Equal(t, cust, m["customer"], "%s", r.body)
	require.Equal(t, map[string]any{"id": posN(saleID), "status": "RECEIVED"}, m["sale"], "sale.id is echoed as a number")
	msgs := m["messages"].([]any)
	require.Len(t, msgs, 1)
	require.Equal(t, "SUCCESS", msgs[0].(map[string]any)["type"])
}

func TestPOSRegisterSale(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db)
		doc := posCPF()
		e.posCustomer(t, doc, posCust{name: "Ana Souza"})
		camp := e.posPercent(t, "Dez por cento", "10", []string{"pdv"})

		t.Run("identified customer", func(t *testing.T) {
			r := e.posPost(t, "/sales", posDiscounted(posSaleBody(posN("1001"), map[string]any{"id": posFormatCPF(doc), "type": "CPF"}), camp))
			posRequireAccepted(t, r, "1001", map[string]any{"id": doc, "type": "CPF"})
			s, err := e.db.Ent.Sale.Query().Where(sale.ExternalID("1001")).WithItems().WithPayments().Only(posSys())
			require.NoError(t, err)
			require.Equal(t, sale.StatusRECEIVED, s.Status)
			require.Equal(t, doc, s.CustomerDocument)
			require.Equal(t, "PDV-01", s.PosID)
			require.Equal(t, "LOJA_FISICA", s.Channel)
			require.True(t, s.Amount.Equal(decimal.NewFromInt(100)))
			require.True(t, s.AmountPayable.Equal(decimal.NewFromInt(90)))
			require.True(t, s.DiscountAmount.Equal(decimal.NewFromInt(10)))
			require.Equal(t, time.Date(2026, 3, 14, 13, 20, 30, 0, time.UTC), s.SoldAt.UTC())
			require.Len(t, s.Edges.Items, 2)
			require.Len(t, s.Edges.Payments, 1)
			require.Equal(t, 3, s.Edges.Payments[0].Installments)
			require.JSONEq(t, `{"number":"123","serialNumber":"1","model":"65","type":"NFCE","url":"https://sefaz.example/nfce/123"}`, string(s.FiscalDocument))
			require.Len(t, posJobs(t, e), 1, "the processing job is stored with the sale")
		})

		t.Run("the fiscal document is stored as its documented fields", func(t *testing.T) {
			// A lone surrogate and a number beyond PostgreSQL's numeric
			// would make jsonb refuse the raw document.
			raw := strings.Replace(string(posJSON(t, posSaleBody(posN("1003"), nil))), `"number":"123"`,
				`"number":"\ud800","extra":1e999999,"nested":{"a":[1,2]}`, 1)
			posRequireAccepted(t, e.posPost(t, "/sales", raw), "1003", map[string]any{"id": posDefault, "type": nil})
			s, err := e.db.Ent.Sale.Query().Where(sale.ExternalID("1003")).Only(posSys())
			require.NoError(t, err)
			require.JSONEq(t, `{"number":"\ufffd","serialNumber":"1","model":"65","type":"NFCE","url":"https://sefaz.example/nfce/123"}`, string(s.FiscalDocument))
			// Absent or null: none.
			for i, fd := range []any{nil, "null"} {
				body := posSaleBody(posN(strconv.Itoa(1004+i)), nil)
				delete(body["sale"].(map[string]any), "fiscalDocument")
				if fd == "null" {
					body["sale"].(map[string]any)["fiscalDocument"] = nil
				}
				posRequireAccepted(t, e.posPost(t, "/sales", body), strconv.Itoa(1004+i), map[string]any{"id": posDefault, "type": nil})
				s, err := e.db.Ent.Sale.Query().Where(sale.ExternalID(strconv.Itoa(1004 + i))).Only(posSys())
				require.NoError(t, err)
				require.Empty(t, s.FiscalDocument)
			}
		})

		t.Run("the earliest and latest dates", func(t *testing.T) {
			for i, date := range []string{"0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999Z", "2026-03-14T10:20:30.123456789+05:45"} {
				id := strconv.Itoa(1010 + i)
				posRequireAccepted(t, e.posPost(t, "/sales", posSet(posSaleBody(posN(id), nil), "sale.date", date)), id, map[string]any{"id": posDefault, "type": nil})
				s, err := e.db.Ent.Sale.Query().Where(sale.ExternalID(id)).Only(posSys())
				require.NoError(t, err)
				want, err := time.Parse(time.RFC3339Nano, date)
				require.NoError(t, err)
				require.Equal(t, want.UTC().Truncate(time.Microsecond), s.SoldAt.UTC().Truncate(time.Microsecond))
				require.Equal(t, http.StatusOK, e.posGet(t, "/sales/"+id).status)
			}
		})

		t.Run("CNPJ customer", func(t *testing.T) {
			r := e.posPost(t, "/sales", posSaleBody(posN("1002"), map[string]any{"id": "12.abc.345/01de-35", "type": "CNPJ"}))
			posRequireAccepted(t, r, "1002", map[string]any{"id": posCNPJAlfa, "type": "CNPJ"})
		})

		t.Run("unidentified customer", func(t *testing.T) {
			for i, cust := range []any{nil, "null", map[string]any{}, map[string]any{"id": nil}, map[string]any{"id": ""},
				map[string]any{"id": "", "type": "CPF"}, map[string]any{"id": posDefault, "type": nil}, map[string]any{"id": "000.000.000-00", "type": "CPF"}} {
				body := posSaleBody(posN(strconv.Itoa(2000+i)), nil)
				if cust == "null" {
					body["customer"] = nil
				} else if cust != nil {
					body["customer"] = cust
				}
				r := e.posPost(t, "/sales", body)
				posRequireAccepted(t, r, strconv.Itoa(2000+i), map[string]any{"id": posDefault, "type": nil})
				s, err := e.db.Ent.Sale.Query().Where(sale.ExternalID(strconv.Itoa(2000 + i))).Only(posSys())
				require.NoError(t, err)
				require.Equal(t, posDefault, s.CustomerDocument)
				require.Nil(t, s.CustomerDocumentType)
			}
		})

		t.Run("the default customer with discounts", func(t *testing.T) {
			for _, cust := range []any{nil, map[string]any{"id": posDefault, "type": "CPF"}, map[string]any{"id": "000.000.000-00"}} {
				r := e.posPost(t, "/sales", posDiscounted(posSaleBody(posN("3001"), cust), camp))
				posRequireProblem(t, r, http.StatusBadRequest, "validation-error", "customer.id")
			}
			// An external discount is a discount too.
			body := posSaleBody(posN("3002"), nil)
			posSet(body, "sale.items.0.discounts", []any{posExternal("1.00", "24.00", "1")})
			posRequireProblem(t, e.posPost(t, "/sales", body), http.StatusBadRequest, "validation-error", "customer.id")
		})

		t.Run("validation", func(t *testing.T) {
			before := e.posCounts(t)
			body := func() map[string]any { return posSaleBody(posN("5001"), map[string]any{"id": doc, "type": "CPF"}) }
			// one is a consistent sale of a single line at price (the
			// amounts match), with discounts.
			one := func(price string, discounts ...any) map[string]any {
				m := body()
				posSet(m, "sale.items", []any{map[string]any{"id": "1", "gtin": posGTINA, "description": "Lote",
					"unitPrice": posN(price), "quantity": posN("1"), "discounts": discounts}})
				for _, f := range []string{"sale.amount", "sale.amountPayable", "sale.payments.0.amount"} {
					posSet(m, f, posN(price))
				}
				return m
			}
			tenTimes := make([]any, 10)
			for i := range tenTimes {
				tenTimes[i] = map[string]any{"promotionId": camp, "unitDiscount": posN("900000000000"), "quantity": posN("1")}
			}
			cases := []struct {
				name  string
				body  any
				field string
			}{
				{"protocol missing", posDelete(body(), "protocol"), "protocol"},
				{"protocol of identify", posSet(body(), "protocol", "PARTNER"), "protocol"},
				{"sale missing", posDelete(body(), "sale"), "sale"},
				{"sale.id missing", posDelete(body(), "sale.id"), "sale.id"},
				{"sale.id a string", posSet(body(), "sale.id", "5001"), "sale.id"},
				{"sale.id negative", posSet(body(), "sale.id", posN("-5001")), "sale.id"},
				{"sale.id fractional", posSet(body(), "sale.id", posN("50.01")), "sale.id"},
				{"sale.id too long", posSet(body(), "sale.id", posN("123456789012345678901")), "sale.id"},
				{"sale.store missing", posDelete(body(), "sale.store"), "sale.store.id"},
				{"sale.store.id missing", posDelete(body(), "sale.store.id"), "sale.store.id"},
				{"sale.store.id blank", posSet(body(), "sale.store.id", " "), "sale.store.id"},
				{"sale.store.posId missing", posDelete(body(), "sale.store.posId"), "sale.store.posId"},
				{"sale.channel missing", posDelete(body(), "sale.channel"), "sale.channel"},
				{"sale.date missing", posDelete(body(), "sale.date"), "sale.date"},
				{"sale.date not ISO 8601", posSet(body(), "sale.date", "14/03/2026 10:20"), "sale.date"},
				{"sale.date in the year 10000 in UTC", posSet(body(), "sale.date", "9999-12-31T23:59:59.999-23:59"), "sale.date"},
				{"sale.date in the year -1 in UTC", posSet(body(), "sale.date", "0000-01-01T00:00:00+01:00"), "sale.date"},
				{"sale.amount missing", posDelete(body(), "sale.amount"), "sale.amount"},
				{"sale.amount zero", posSet(body(), "sale.amount", posN("0")), "sale.amount"},
				{"sale.amount negative", posSet(body(), "sale.amount", posN("-100.00")), "sale.amount"},
				{"sale.amount a string", posSet(body(), "sale.amount", "100.00"), "sale.amount"},
				{"sale.amount beyond numeric(20,8)", posSet(body(), "sale.amount", posN("1000000000000")), "sale.amount"},
				{"sale.amount with a huge exponent", posSet(body(), "sale.amount", posN("1E2147483647")), "sale.amount"},
				{"a consistent sale beyond numeric(20,8)", one("1000000000000"), "sale.amount"},
				{"a line beyond numeric(20,8)", one("1000000000000"), "sale.items[0].unitPrice"},
				{"discounts whose sum is beyond numeric(20,8)", one("900000000000", tenTimes...), "sale.items[0].discounts"},
				{"sale.amountPayable missing", posDelete(body(), "sale.amountPayable"), "sale.amountPayable"},
				{"sale.amountPayable zero", posSet(body(), "sale.amountPayable", posN("0")), "sale.amountPayable"},
				{"sale.discountAmount negative", posSet(body(), "sale.discountAmount", posN("-1")), "sale.discountAmount"},
				{"sale.items missing", posDelete(body(), "sale.items"), "sale.items"},
				{"sale.items empty", posSet(body(), "sale.items", []any{}), "sale.items"},
				{"items[].id missing", posDelete(body(), "sale.items.1.id"), "sale.items[1].id"},
				{"items[].gtin missing", posDelete(body(), "sale.items.0.gtin"), "sale.items[0].gtin"},
				{"items[].description missing", posDelete(body(), "sale.items.0.description"), "sale.items[0].description"},
				{"items[].unitPrice missing", posDelete(body(), "sale.items.0.unitPrice"), "sale.items[0].unitPrice"},
				{"items[].unitPrice zero", posSet(body(), "sale.items.0.unitPrice", posN("0")), "sale.items[0].unitPrice"},
				{"items[].unitPrice negative", posSet(body(), "sale.items.0.unitPrice", posN("-25")), "sale.items[0].unitPrice"},
				{"items[].quantity missing", posDelete(body(), "sale.items.0.quantity"), "sale.items[0].quantity"},
				{"items[].quantity zero", posSet(body(), "sale.items.0.quantity", posN("0")), "sale.items[0].quantity"},
				{"items[].quantity negative", posSet(body(), "sale.items.1.quantity", posN("-4")), "sale.items[1].quantity"},
				{"discounts[].promotionId missing", posDelete(posDiscounted(body(), camp), "sale.items.0.discounts.0.promotionId"), "sale.items[0].discounts[0].promotionId"},
				{"discounts[].quantity missing", posDelete(posDiscounted(body(), camp), "sale.items.0.discounts.0.quantity"), "sale.items[0].discounts[0].quantity"},
				{"discounts[].unitDiscount missing", posDelete(posDiscounted(body(), camp), "sale.items.0.discounts.0.unitDiscount"), "sale.items[0].discounts[0].unitDiscount"},
				{"discounts[].unitDiscount negative", posSet(posDiscounted(body(), camp), "sale.items.0.discounts.0.unitDiscount", posN("-5")), "sale.items[0].discounts[0].unitDiscount"},
				{"discounts[].unitDiscount above the unit price", posSet(posDiscounted(body(), camp), "sale.items.0.discounts.0.unitDiscount", posN("25.01")), "sale.items[0].discounts[0].unitDiscount"},
				{"discounts[].quantity above the item's", posSet(posDiscounted(body(), camp), "sale.items.0.discounts.0.quantity", posN("3")), "sale.items[0].discounts[0].quantity"},
				{"discounts adding up to more than the item", posSet(posDiscounted(body(), camp), "sale.items.0.discounts",
					[]any{posExternal("20", "5", "2"), map[string]any{"promotionId": camp, "unitDiscount": posN("20"), "quantity": posN("2")}}), "sale.items[0].discounts"},
				{"sale.payments missing", posDelete(body(), "sale.payments"), "sale.payments"},
				{"sale.payments empty", posSet(body(), "sale.payments", []any{}), "sale.payments"},
				{"payments[].id missing", posDelete(body(), "sale.payments.0.id"), "sale.payments[0].id"},
				{"payments[].id a string", posSet(body(), "sale.payments.0.id", "1"), "sale.payments.id"},
				{"payments[].amount missing", posDelete(body(), "sale.payments.0.amount"), "sale.payments[0].amount"},
				{"payments[].amount zero", posSet(body(), "sale.payments.0.amount", posN("0")), "sale.payments[0].amount"},
				{"payments[].method missing", posDelete(body(), "sale.payments.0.method"), "sale.payments[0].method"},
				{"payments[].installments fractional", posSet(body(), "sale.payments.0.installments", posN("1.5")), "sale.payments.installments"},
				{"fiscalDocument not an object", posSet(body(), "sale.fiscalDocument", posN("1e999999")), "sale.fiscalDocument"},
				{"fiscalDocument number not a string", posSet(body(), "sale.fiscalDocument.number", posN("123")), "sale.fiscalDocument.number"},
				{"customer.id invalid", posSet(body(), "customer.id", "529.982.247-24"), "customer.id"},
				{"customer.type invalid", posSet(body(), "customer.type", "RG"), "customer.type"},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					posRequireProblem(t, e.posPost(t, "/sales", c.body), http.StatusBadRequest, "validation-error", c.field)
				})
			}
			require.Equal(t, before, e.posCounts(t), "no refused sale stored anything")
		})

		t.Run("total against sale.amount", func(t *testing.T) {
			// The items add up to R$ 100.00; the default tolerance is R$ 0.10.
			amount := func(id, amount string) map[string]any {
				return posSet(posSaleBody(posN(id), nil), "sale.amount", posN(amount))
			}
			for _, a := range []string{"100.11", "99.89", "150", "0.01"} {
				r := e.posPost(t, "/sales", amount("6001", a))
				m := posRequireProblem(t, r, http.StatusUnprocessableEntity, "sale-value-inconsistency")
				require.NotContains(t, m, "errors")
			}
			for i, a := range []string{"100.10", "99.90", "100.00", "100.05"} {
				posRequireAccepted(t, e.posPost(t, "/sales", amount(strconv.Itoa(6010+i), a)), strconv.Itoa(6010+i), map[string]any{"id": posDefault, "type": nil})
			}
			e.posSettings(t, app.TenantSettings{SaleTolerance: posDecPtr("0.50")})
			defer e.posSettings(t, app.TenantSettings{SaleTolerance: posDecPtr("0.10")})
			posRequireAccepted(t, e.posPost(t, "/sales", amount("6020", "100.40")), "6020", map[string]any{"id": posDefault, "type": nil})
			posRequireAccepted(t, e.posPost(t, "/sales", amount("6021", "99.50")), "6021", map[string]any{"id": posDefault, "type": nil})
			posRequireProblem(t, e.posPost(t, "/sales", amount("6022", "100.51")), http.StatusUnprocessableEntity, "sale-value-inconsistency")
			require.Zero(t, e.db.Ent.Sale.Query().Where(sale.ExternalIDIn("6001", "6022")).CountX(posSys()))
		})

		t.Run("unknown store", func(t *testing.T) {
			for _, code := range []string{"LJ999", "lj001", strings.Repeat("X", 300)} {
				r := e.posPost(t, "/sales", posSet(posSaleBody(posN("7001"), nil), "sale.store.id", code))
				posRequireProblem(t, r, http.StatusNotFound, "resource-not-found")
			}
		})

		t.Run("registration disabled", func(t *testing.T) {
			e.posSettings(t, app.TenantSettings{SaleRegistration: posBool(false)})
			r := e.posPost(t, "/sales", posSaleBody(posN("7101"), nil))
			e.posSettings(t, app.TenantSettings{SaleRegistration: posBool(true)})
			posRequireProblem(t, r, http.StatusServiceUnavailable, "sale-notification-disabled")
			require.Zero(t, e.db.Ent.Sale.Query().Where(sale.ExternalID("7101")).CountX(posSys()))
		})

		t.Run("the same receipt twice", func(t *testing.T) {
			queued := len(posJobs(t, e))
			cust := map[string]any{"id": doc, "type": "CPF"}
			for range 2 {
				posRequireAccepted(t, e.posPost(t, "/sales", posSaleBody(posN("8001"), cust)), "8001", map[string]any{"id": doc, "type": "CPF"})
			}
			require.Equal(t, 1, e.db.Ent.Sale.Query().Where(sale.ExternalID("8001")).CountX(posSys()), "one sale")
			require.Len(t, posJobs(t, e), queued+1, "processed once")
			// Concurrent resends are one sale as well.
			var wg sync.WaitGroup
			codes := make([]int, 6)
			for i := range codes {
				wg.Add(1)
				go func() {
					defer wg.Done()
					codes[i] = e.posPost(t, "/sales", posSaleBody(posN("8002"), cust)).status
				}()
			}
			wg.Wait()
			for _, c := range codes {
				require.Equal(t, http.StatusAccepted, c)
			}
			require.Equal(t, 1, e.db.Ent.Sale.Query().Where(sale.ExternalID("8002")).CountX(posSys()))
			require.Len(t, posJobs(t, e), queued+2)

			// The same number from another store is another sale.
			_, err := e.app.CreateStore(posSys(), e.tenantID, posStore2, "Loja Shopping")
			require.NoError(t, err)
			posRequireAccepted(t, e.posPost(t, "/sales", posSet(posSaleBody(posN("8001"), cust), "sale.store.id", posStore2)),
				"8001", map[string]any{"id": doc, "type": "CPF"})
			require.Equal(t, 2, e.db.Ent.Sale.Query().Where(sale.ExternalID("8001")).CountX(posSys()))
			require.Len(t, posJobs(t, e), queued+3)

			r := e.posGet(t, "/sales/8001")
			posRequireProblem(t, r, http.StatusBadRequest, "validation-error", "storeId")
			r = e.posGet(t, "/sales/8001?storeId="+posStore2)
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			require.Equal(t, map[string]any{"id": posStore2}, r.obj(t)["sale"].(map[string]any)["store"])
		})
	})
}

// posJob is a row of river_job: its id and its arguments.
type posJob[A any] struct {
	id   int64
	args A
}

// posJobRows are the jobs of a kind, oldest first.
func posJobRows[A river.JobArgs](t testing.TB, e *posEnv) []posJob[A] {
	t.Helper()
	var kind A
	rows, err := e.db.SQL.Query(`SELECT id, args FROM river_job WHERE kind = '` + kind.Kind() + `' ORDER BY id`)
	require.NoError(t, err)
	defer rows.Close()
	var out []posJob[A]
	for rows.Next() {
		var j posJob[A]
		var args []byte
		require.NoError(t, rows.Scan(&j.id, &args))
		require.NoError(t, json.Unmarshal(args, &j.args))
		out = append(out, j)
	}
	require.NoError(t, rows.Err())
	return out
}

func posJobs(t testing.TB, e *posEnv) []posJob[jobs.ProcessSale] {
	t.Helper()
	return posJobRows[jobs.ProcessSale](t, e)
}

// posWork runs the process_sale job of a sale as River would hand it over,
// in a worker process of its own.
func posWork(t testing.TB, e *posEnv, saleID string) {
	t.Helper()
	posWorkIn(t, e, &app.App{DB: e.db, Clock: time.Now}, saleID)
}

// posWorkIn is posWork in the process of a.
func posWorkIn(t testing.TB, e *posEnv, a *app.App, saleID string) {
	t.Helper()
	for _, j := range posJobs(t, e) {
		if j.args.SaleID != saleID {
			continue
		}
		w := &worker.ProcessSaleWorker{App: a}
		err := w.Work(context.Background(), &river.Job[jobs.ProcessSale]{
			JobRow: &rivertype.JobRow{ID: j.id, Kind: jobs.ProcessSale{}.Kind(), Attempt: 1, MaxAttempts: 25},
			Args:   j.args,
		})
		require.NoError(t, err)
		return
	}
	t.Fatalf("no process_sale job for %s", saleID)
}

// posSaleID is the id (sal_…) of the sale a store registered.
func (e *posEnv) posSaleID(t testing.TB, receipt string) string {
	t.Helper()
	s, err := e.db.Ent.Sale.Query().Where(sale.ExternalID(receipt)).Only(posSys())
	require.NoError(t, err)
	return s.ID
}

func TestPOSSaleProcessing(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db)
		doc := posCPF()
		cust := e.posCustomer(t, doc, posCust{name: "Ana Souza"})
		camp := e.posPercent(t, "Dez por cento", "10", []string{"pdv"})
		// A campaign of another tenant over the same database.
		other := posSetup(t, db)
		foreign := other.posPercent(t, "Campanha de outra rede", "5", []string{"pdv"})

		// R$ 100.00 of items less R$ 10.00 of campaign discount, R$ 2.00
		// external, R$ 0.30 of another tenant's campaign and R$ 0.21 of a
		// promotion that is no campaign at all: R$ 87.49 payable, 87 points.
		body := posDiscounted(posSaleBody(posN("555"), map[string]any{"id": doc, "type": "CPF"}), camp)
		posSet(body, "sale.items.1.discounts", []any{posExternal("2.00", "10.50", "1"),
			map[string]any{"promotionId": foreign, "unitDiscount": posN("0.30"), "quantity": posN("1")},
			map[string]any{"promotionId": "cmp_inexistente", "unitDiscount": posN("0.21"), "quantity": posN("1")}})
		posSet(body, "sale.discountAmount", posN("12.51"))
		posSet(body, "sale.amountPayable", posN("87.49"))
		posSet(body, "sale.payments.0.amount", posN("87.49"))
		posRequireAccepted(t, e.posPost(t, "/sales", body), "555", map[string]any{"id": doc, "type": "CPF"})
		saleID := e.posSaleID(t, "555")

		r := e.posGet(t, "/sales/555")
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		got := r.obj(t)["sale"].(map[string]any)
		require.Equal(t, []string{"amountPayable", "id", "pointsCredited", "pointsReversed", "receivedAt", "returnedAmount", "returns", "saleId", "status", "store"}, posKeys(got))
		require.Equal(t, "RECEIVED", got["status"])
		require.Equal(t, "555", got["id"])
		require.Equal(t, saleID, got["saleId"])
		require.Equal(t, posN("0"), got["pointsCredited"])
		require.Equal(t, map[string]any{"id": posStore}, got["store"])
		require.Equal(t, "87.49", string(got["amountPayable"].(json.Number)))

		posWork(t, e, saleID)
		check := func(t *testing.T) {
			t.Helper()
			for _, ref := range []string{"555", saleID, "555?storeId=" + posStore} {
				r := e.posGet(t, "/sales/"+ref)
				require.Equal(t, http.StatusOK, r.status, "%s", r.body)
				got := r.obj(t)["sale"].(map[string]any)
				require.Equal(t, "PROCESSED", got["status"], "%s", r.body)
				require.Equal(t, posN("87"), got["pointsCredited"])
				require.Contains(t, got, "processedAt")
				require.NotContains(t, got, "reason")
			}
			entries, err := e.db.Ent.PointsEntry.Query().Where(pointsentry.CustomerID(cust.ID)).All(posSys())
			require.NoError(t, err)
			require.Len(t, entries, 1, "the ledger is credited once")
			require.Equal(t, int64(87), entries[0].Points)
			require.Equal(t, pointsentry.SourceKindSale, entries[0].SourceKind)
			require.Equal(t, saleID, *entries[0].SourceID)
			c, err := e.db.Ent.Customer.Get(posSys(), cust.ID)
			require.NoError(t, err)
			require.Equal(t, int64(87), c.PointsBalance)
			require.Equal(t, "87.49", c.LifetimeValue.String(), "lifetime value")
			reds, err := e.db.Ent.Redemption.Query().Where(redemption.CustomerID(cust.ID)).All(posSys())
			require.NoError(t, err)
			require.Len(t, reds, 1, "one redemption: the campaign of the tenant; not the external discount, another tenant's campaign or an unknown promotion")
			fc, err := other.db.Ent.Campaign.Get(posSys(), foreign)
			require.NoError(t, err)
			require.Zero(t, fc.RedemptionsCount)
			require.Equal(t, camp, reds[0].CampaignID)
			require.Equal(t, "555", reds[0].OrderID)
			require.Equal(t, saleID, *reds[0].SaleID)
			require.True(t, reds[0].DiscountAmount.Equal(decimal.NewFromInt(10)), reds[0].DiscountAmount.String())
			cp, err := e.db.Ent.Campaign.Get(posSys(), camp)
			require.NoError(t, err)
			require.Equal(t, 1, cp.RedemptionsCount)
			evs, err := e.db.Ent.Event.Query().Where(event.Type("sale.processed"), event.SubjectID(saleID)).All(posSys())
			require.NoError(t, err)
			require.Len(t, evs, 1, "sale.processed")
			require.Equal(t, cust.ID, evs[0].Data["customer_id"])
			require.EqualValues(t, 87, evs[0].Data["points_credited"])
			s, err := e.db.Ent.Sale.Get(posSys(), saleID)
			require.NoError(t, err)
			require.Equal(t, cust.ID, *s.CustomerID)
		}
		check(t)

		t.Run("a second run and a resend change nothing", func(t *testing.T) {
			posWork(t, e, saleID)
			queued := len(posJobs(t, e))
			posRequireAccepted(t, e.posPost(t, "/sales", body), "555", map[string]any{"id": doc, "type": "CPF"})
			require.Len(t, posJobs(t, e), queued)
			check(t)
		})

		t.Run("a sale under R$ 1 earns no points but counts as spent", func(t *testing.T) {
			small := posSaleBody(posN("556"), map[string]any{"id": doc, "type": "CPF"})
			posSet(small, "sale.items", []any{map[string]any{"id": "1", "gtin": posGTINA, "description": "Bala",
				"unitPrice": posN("0.50"), "quantity": posN("1")}})
			for _, f := range []string{"sale.amount", "sale.amountPayable", "sale.payments.0.amount"} {
				posSet(small, f, posN("0.50"))
			}
			posRequireAccepted(t, e.posPost(t, "/sales", small), "556", map[string]any{"id": doc, "type": "CPF"})
			id := e.posSaleID(t, "556")
			posWork(t, e, id)
			r := e.posGet(t, "/sales/556")
			got := r.obj(t)["sale"].(map[string]any)
			require.Equal(t, "PROCESSED", got["status"], "%s", r.body)
			require.Equal(t, posN("0"), got["pointsCredited"])
			c, err := e.db.Ent.Customer.Get(posSys(), cust.ID)
			require.NoError(t, err)
			require.Equal(t, "87.99", c.LifetimeValue.String(), "87.49 + 0.50")
			require.Equal(t, int64(87), c.PointsBalance)
			require.Equal(t, 1, e.db.Ent.Event.Query().Where(event.Type("sale.processed"), event.SubjectID(id)).CountX(posSys()))
		})

		t.Run("unidentified customer", func(t *testing.T) {
			posRequireAccepted(t, e.posPost(t, "/sales", posSaleBody(posN("557"), nil)), "557", map[string]any{"id": posDefault, "type": nil})
			id := e.posSaleID(t, "557")
			posWork(t, e, id)
			got := e.posGet(t, "/sales/557").obj(t)["sale"].(map[string]any)
			require.Equal(t, "PROCESSED", got["status"])
			require.Equal(t, posN("0"), got["pointsCredited"])
			s, err := e.db.Ent.Sale.Get(posSys(), id)
			require.NoError(t, err)
			require.Nil(t, s.CustomerID)
			require.Equal(t, 1, e.db.Ent.Event.Query().Where(event.Type("sale.processed"), event.SubjectID(id)).CountX(posSys()))
		})

		t.Run("an unknown customer is pre-registered when the tenant enables it", func(t *testing.T) {
			e.posSettings(t, app.TenantSettings{PreRegistration: posBool(true)})
			defer e.posSettings(t, app.TenantSettings{PreRegistration: posBool(false)})
			fresh := posCPF()
			posRequireAccepted(t, e.posPost(t, "/sales", posSaleBody(posN("558"), map[string]any{"id": fresh, "type": "CPF"})), "558",
				map[string]any{"id": fresh, "type": "CPF"})
			posWork(t, e, e.posSaleID(t, "558"))
			c, err := e.db.Ent.Customer.Query().Where(customer.DocumentIndex(sealed.MustIndex(fresh))).Only(posSys())
			require.NoError(t, err)
			require.Equal(t, int64(100), c.PointsBalance)
			r := e.posPost(t, "/customers/identify", posIdentifyBody("s", fresh, "CPF"))
			require.Equal(t, "PRE_REGISTER", r.obj(t)["customer"].(map[string]any)["status"])
		})

		t.Run("bonus points, level and lifetime value", func(t *testing.T) {
			e.posCampaign(t, app.CampaignInput{Name: "Pontos em triplo", Type: "bonus_points", Channels: []string{"pdv"},
				Discount: &app.DiscountInput{Multiplier: posDecPtr("3")}})
			e.posCampaign(t, app.CampaignInput{Name: "Pontos só no app", Type: "bonus_points", Channels: []string{"app"},
				Discount: &app.DiscountInput{Multiplier: posDecPtr("10")}})
			big := posSaleBody(posN("560"), map[string]any{"id": doc, "type": "CPF"})
			posSet(big, "sale.items", []any{map[string]any{"id": "1", "gtin": posGTINC, "description": "TV",
				"unitPrice": posN("400.00"), "quantity": posN("1")}})
			for _, f := range []string{"sale.amount", "sale.amountPayable", "sale.payments.0.amount"} {
				posSet(big, f, posN("400.00"))
			}
			// Bonus campaigns are those active when the sale was made.
			posSet(big, "sale.date", time.Now().Format(time.RFC3339))
			before, err := e.db.Ent.Customer.Get(posSys(), cust.ID)
			require.NoError(t, err)
			require.Equal(t, customer.LevelBronze, before.Level)
			posRequireAccepted(t, e.posPost(t, "/sales", big), "560", map[string]any{"id": doc, "type": "CPF"})
			id := e.posSaleID(t, "560")
			posWork(t, e, id)
			got := e.posGet(t, "/sales/560").obj(t)["sale"].(map[string]any)
			require.Equal(t, "PROCESSED", got["status"])
			require.Equal(t, posN("1200"), got["pointsCredited"], "400 points and a bonus of (3 − 1) × 400; the app campaign does not apply")
			entries, err := e.db.Ent.PointsEntry.Query().Where(pointsentry.SourceID(id)).All(posSys())
			require.NoError(t, err)
			require.Len(t, entries, 2)
			kinds := []pointsentry.Kind{entries[0].Kind, entries[1].Kind}
			require.ElementsMatch(t, []pointsentry.Kind{pointsentry.KindCredit, pointsentry.KindBonus}, kinds)
			after, err := e.db.Ent.Customer.Get(posSys(), cust.ID)
			require.NoError(t, err)
			require.Equal(t, before.PointsBalance+1200, after.PointsBalance)
			require.Equal(t, before.LifetimeValue.Add(decimal.NewFromInt(400)).String(), after.LifetimeValue.String())
			require.Equal(t, customer.LevelSilver, after.Level, "over 1,000 points in 12 months")
			require.Equal(t, 1, e.db.Ent.Event.Query().Where(event.Type("customer.level_changed"), event.SubjectID(cust.ID)).CountX(posSys()))
			r := e.posPost(t, "/customers/identify", posIdentifyBody("s", doc, "CPF"))
			require.Equal(t, map[string]any{"code": posN("2"), "description": "silver"}, r.obj(t)["customer"].(map[string]any)["classification"])
			posWork(t, e, id)
			again, err := e.db.Ent.Customer.Get(posSys(), cust.ID)
			require.NoError(t, err)
			require.Equal(t, after.PointsBalance, again.PointsBalance, "a second run credits nothing")
		})

		t.Run("unknown sales", func(t *testing.T) {
			for _, ref := range []string{"999999", "sal_nope", "abc", "%00", "%FF%FE", "sal_%00", "555?storeId=%00", "555?storeId=%FF", "555?storeId=" + posStore2} {
				posRequireProblem(t, e.posGet(t, "/sales/"+ref), http.StatusNotFound, "resource-not-found")
			}
			// Another tenant's sale, by receipt or by id.
			posRequireAccepted(t, other.posPost(t, "/sales", posSaleBody(posN("559"), nil)), "559", map[string]any{"id": posDefault, "type": nil})
			otherID := other.posSaleID(t, "559")
			for _, ref := range []string{"559", otherID} {
				posRequireProblem(t, e.posGet(t, "/sales/"+ref), http.StatusNotFound, "resource-not-found")
			}
			r := other.posGet(t, "/sales/"+otherID)
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		})
	})
}

// TestPOSSaleProcessedByRiver registers a sale with a working River client
// and waits for the outcome over HTTP.
func TestPOSSaleProcessedByRiver(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db)
		rc, err := worker.NewClient(e.app, worker.Config{Work: true})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		require.NoError(t, rc.Start(ctx))
		t.Cleanup(func() {
			stop, done := context.WithTimeout(context.Background(), 10*time.Second)
			defer done()
			_ = rc.Stop(stop)
			cancel()
		})
		doc := posCPF()
		cust := e.posCustomer(t, doc, posCust{name: "Rio"})
		posRequireAccepted(t, e.posPost(t, "/sales", posSaleBody(posN("31337"), map[string]any{"id": doc, "type": "CPF"})),
			"31337", map[string]any{"id": doc, "type": "CPF"})
		var got map[string]any
		require.Eventually(t, func() bool {
			got = e.posGet(t, "/sales/31337").obj(t)["sale"].(map[string]any)
			return got["status"] != "RECEIVED"
		}, 30*time.Second, 50*time.Millisecond)
		require.Equal(t, "PROCESSED", got["status"], "%v", got)
		require.Equal(t, posN("100"), got["pointsCredited"])
		c, err := e.db.Ent.Customer.Get(posSys(), cust.ID)
		require.NoError(t, err)
		require.Equal(t, int64(100), c.PointsBalance)
	})
}
