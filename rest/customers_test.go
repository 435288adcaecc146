package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/schema/viewer"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// The tests of the /v1 customer endpoints: a real server over a real database
// (SQLite, and PostgreSQL when FIDELIZA_TEST_DATABASE_URL is set) with tokens
// of the real token service. Every helper is prefixed with cust: the package
// has other fixtures.

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

// custTenant creates a tenant and returns its id.
func (e *custEnv) custTenant(t *testing.T, name string) string {
	t.Helper()
	tn, err := e.app.Backoffice.CreateTenant(custSys(), name, nil)
	require.NoError(t, err)
	return tn.ID
}

// custToken makes an OAuth client of tenantID (allowed every scope) and
// returns an access token for exactly scopes.
func (e *custEnv) custToken(t *testing.T, tenantID string, scopes ...string) string {
	t.Helper()
	c, err := e.app.Backoffice.CreateClient(custSys(), tenantID, apiclient.KindOauth, "customers test", nil)
	require.NoError(t, err)
	tok, err := e.app.Auth.IssueToken(context.Background(), auth.TokenRequest{
		GrantType: "client_credentials", ClientID: c.Client.ID, ClientSecret: c.Secret, Scope: strings.Join(scopes, " "),
	})
	require.NoError(t, err)
	require.Equal(t, strings.Join(scopes, " "), tok.Scope)
	return tok.AccessToken
}

// custNewCPF returns a fresh valid CPF (11 digits) and remembers it as a
// secret that no response body may carry.
func (e *custEnv) custNewCPF() string {
	for {
		base := fmt.Sprintf("%09d", rand.IntN(1_000_000_000))
		if strings.Count(base, base[:1]) == len(base) {
			continue
		}
		d := custCPFDigits(base)
		e.custSecret(d)
		return d
	}
}

// custCPFDigits appends the two check digits to a 9-digit base.
func custCPFDigits(base string) string {
	digit := func(s string) byte {
		sum := 0
		for i := range len(s) {
			sum += int(s[i]-'0') * (len(s) + 1 - i)
		}
		r := sum * 10 % 11 % 10
		return byte('0' + r)
	}
	s := base + string(digit(base))
	return s + string(digit(s))
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

type custResp struct {
	status int
	header http.Header
	body   []byte
}

// obj decodes the body as one JSON object, numbers as json.Number.
func (r custResp) obj(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&m), "body: %s", r.body)
	return m
}

// custRaw sends a request with a raw body and content type.
func (e *custEnv) custRaw(t *testing.T, method, path, token, contentType, body string) custResp {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	require.NoError(t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := e.srv.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	e.custRequireNoCPF(t, method+" "+path+" response", string(b)+fmt.Sprint(res.Header))
	return custResp{status: res.StatusCode, header: res.Header, body: b}
}

// custDo sends body (nil: none; string: as is; else its JSON) as
// application/json.
func (e *custEnv) custDo(t *testing.T, method, path, token string, body any) custResp {
	t.Helper()
	var raw string
	switch b := body.(type) {
	case nil:
	case string:
		raw = b
	default:
		j, err := json.Marshal(b)
		require.NoError(t, err)
		raw = string(j)
	}
	ct := ""
	if body != nil {
		ct = "application/json"
	}
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

// custWith returns a copy of m with the pairs set (a nil value deletes).
func custWith(m map[string]any, kv ...any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		k := kv[i].(string)
		if kv[i+1] == nil {
			delete(out, k)
			continue
		}
		out[k] = kv[i+1]
	}
	return out
}

func custKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func custSorted(s ...string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return s
}

// custRequireError checks an error answer of the /v1 interface: its status,
// its error code, its exact set of keys, its field and, for
// validation_error, the fields of details in order.
func custRequireError(t *testing.T, r custResp, status int, code, field string, details ...string) map[string]any {
	t.Helper()
	require.Equal(t, status, r.status, "%s", r.body)
	require.Equal(t, "application/json", r.header.Get("Content-Type"))
	m := r.obj(t)
	require.Equal(t, code, m["error"], "%s", r.body)
	switch code {
	case "insufficient_scope", "invalid_token":
		require.Equal(t, custSorted("error", "error_description"), custKeys(m), "%s", r.body)
		require.NotEmpty(t, m["error_description"])
		return m
	case "validation_error":
		require.Equal(t, custSorted("error", "message", "field", "details"), custKeys(m), "%s", r.body)
		var got []string
		for _, d := range m["details"].([]any) {
			dm := d.(map[string]any)
			require.Equal(t, custSorted("field", "message"), custKeys(dm))
			require.NotEmpty(t, dm["message"])
			got = append(got, dm["field"].(string))
		}
		require.Equal(t, details, got, "%s", r.body)
	case "duplicate_customer":
		require.Equal(t, custSorted("error", "message", "field"), custKeys(m), "%s", r.body)
	default:
		require.Equal(t, custSorted("error", "message"), custKeys(m), "%s", r.body)
	}
	require.NotEmpty(t, m["message"])
	if field != "" {
		require.Equal(t, field, m["field"], "%s", r.body)
	}
	return m
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
	require.Equal(t, []string{"data", "pagination"}, custKeys(m))
	data, ok := m["data"].([]any)
	require.True(t, ok, "data is not an array: %s", r.body)
	p := custPage{}
	for _, d := range data {
		item := d.(map[string]any)
		p.items = append(p.items, item)
		p.ids = append(p.ids, item["id"].(string))
	}
	pg := m["pagination"].(map[string]any)
	require.Equal(t, []string{"has_more", "next_cursor", "total"}, custKeys(pg))
	p.nextCursor = pg["next_cursor"]
	p.hasMore = pg["has_more"].(bool)
	total, err := pg["total"].(json.Number).Int64()
	require.NoError(t, err)
	p.total = int(total)
	if p.hasMore {
		require.IsType(t, "", p.nextCursor)
		require.NotEmpty(t, p.nextCursor)
	} else {
		require.Nil(t, p.nextCursor, "next_cursor must be null on the last page")
	}
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

func TestCustomerCreate(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := custSetup(t, db)
		cpf := e.custNewCPF()

		from := time.Now()
		r := e.custDo(t, http.MethodPost, "/v1/customers", e.token, map[string]any{
			"external_id": "crm-1", "name": "  Ana Lima  ", "email": "Ana@X.com", "cpf": custFormatCPF(cpf),
			"phone": "+5511987654321", "birth_date": "1990-05-17", "gender": "F",
			"consent":        map[string]any{"marketing_email": true, "marketing_sms": false},
			"points_balance": 1000, "level": "diamond", "lifetime_value": 99999, // not inputs: ignored
		})
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		require.Equal(t, "application/json", r.header.Get("Content-Type"))
		created := r.obj(t)
		require.Equal(t, []string{"created_at", "email", "external_id", "id", "name"}, custKeys(created))
		id := created["id"].(string)
		require.Regexp(t, `^cus_[0-9a-z]{26}$`, id)
		custRequireTime(t, created["created_at"], from, time.Now())
		require.Equal(t, map[string]any{
			"id": id, "external_id": "crm-1", "name": "Ana Lima", "email": "Ana@X.com", "created_at": created["created_at"],
		}, created)
		require.Equal(t, "/v1/customers/"+id, r.header.Get("Location"))

		// The Location is readable, and fields that are not inputs kept their defaults.
		got := e.custDo(t, http.MethodGet, r.header.Get("Location"), e.token, nil)
		require.Equal(t, http.StatusOK, got.status, "%s", got.body)
		full := got.obj(t)
		require.Equal(t, custMasked(cpf), full["cpf"])
		require.Equal(t, json.Number("0"), full["points_balance"])
		require.Equal(t, "bronze", full["level"])
		require.Equal(t, json.Number("0"), full["lifetime_value"])
		require.Equal(t, 1, e.custCount(t))

		// Minimal body, and the content types a JSON body may declare.
		for i, ct := range []string{"application/json", "application/json; charset=utf-8", ""} {
			c := e.custNewCPF()
			body, _ := json.Marshal(custBasic("Minimo", fmt.Sprintf("min%d@x.com", i), c))
			r := e.custRaw(t, http.MethodPost, "/v1/customers", e.token, ct, string(body))
			require.Equal(t, http.StatusCreated, r.status, "content type %q: %s", ct, r.body)
			m := r.obj(t)
			require.Nil(t, m["external_id"])
			require.Contains(t, m, "external_id")
		}
		require.Equal(t, 4, e.custCount(t))

		other := e.custNewCPF()
		cases := []struct {
			name  string
			body  any
			field string
		}{
			{"e-mail taken", custBasic("Outra", "Ana@X.com", other), "email"},
			{"e-mail taken, other case", custBasic("Outra", "ana@x.com", other), "email"},
			{"e-mail taken, upper case and spaces", custBasic("Outra", " ANA@X.COM ", other), "email"},
			{"CPF taken, unformatted", custBasic("Outra", "outra@x.com", cpf), "cpf"},
			{"CPF taken, formatted", custBasic("Outra", "outra@x.com", custFormatCPF(cpf)), "cpf"},
			{"CPF taken, with spaces around", custBasic("Outra", "outra@x.com", " "+custFormatCPF(cpf)+"\n"), "cpf"},
			{"both taken", custBasic("Outra", "ana@x.com", cpf), "email"},
		}
		for _, tc := range cases {
			t.Run("409 "+tc.name, func(t *testing.T) {
				r := e.custDo(t, http.MethodPost, "/v1/customers", e.token, tc.body)
				m := custRequireError(t, r, http.StatusConflict, "duplicate_customer", tc.field)
				require.Equal(t, tc.field, m["field"])
			})
		}
		require.Equal(t, 4, e.custCount(t), "a refused create stored a customer")

		// Uniqueness is per tenant: another tenant may register the same person.
		other2 := e.custTenant(t, "Outra Loja")
		tokB := e.custToken(t, other2, custScopeWrite)
		e.custCreate(t, tokB, custBasic("Ana Lima", "ana@x.com", cpf))
		require.Equal(t, 5, e.custCount(t))
	})
}

func TestCustomerCreateValidation(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := custSetup(t, db)
		cpf := e.custNewCPF()
		valid := custBasic("Ana Lima", "ana@x.com", cpf)
		badDigits := cpf[:9] + string('0'+(cpf[9]-'0'+1)%10) + cpf[10:]
		e.custSecret(badDigits)
		future := time.Now().AddDate(0, 0, 2).Format(time.DateOnly)

		cases := []struct {
			name    string
			body    any
			details []string // the fields of details, in order; the first is field
		}{
			{"missing name", custWith(valid, "name", nil), []string{"name"}},
			{"missing email", custWith(valid, "email", nil), []string{"email"}},
			{"missing cpf", custWith(valid, "cpf", nil), []string{"cpf"}},
			{"empty object", map[string]any{}, []string{"name", "email", "cpf"}},
			{"null required fields", map[string]any{"name": nil, "email": nil, "cpf": nil}, []string{"name", "email", "cpf"}},
			{"empty name", custWith(valid, "name", ""), []string{"name"}},
			{"blank name", custWith(valid, "name", "   "), []string{"name"}},
			{"name too long", custWith(valid, "name", strings.Repeat("a", 201)), []string{"name"}},
			{"empty email", custWith(valid, "email", ""), []string{"email"}},
			{"e-mail without domain", custWith(valid, "email", "ana@"), []string{"email"}},
			{"e-mail without at", custWith(valid, "email", "ana.x.com"), []string{"email"}},
			{"e-mail with display name", custWith(valid, "email", "Ana <ana@x.com>"), []string{"email"}},
			{"CPF with wrong check digits", custWith(valid, "cpf", badDigits), []string{"cpf"}},
			{"CPF with wrong check digits, formatted", custWith(valid, "cpf", custFormatCPF(badDigits)), []string{"cpf"}},
			{"CPF of 11 repeated digits", custWith(valid, "cpf", "111.111.111-11"), []string{"cpf"}},
			{"CPF of 11 zeros", custWith(valid, "cpf", "00000000000"), []string{"cpf"}},
			{"CPF too short", custWith(valid, "cpf", cpf[:10]), []string{"cpf"}},
			{"CPF with letters", custWith(valid, "cpf", cpf[:10]+"X"), []string{"cpf"}},
			{"empty CPF", custWith(valid, "cpf", ""), []string{"cpf"}},
			{"phone without plus", custWith(valid, "phone", "11987654321"), []string{"phone"}},
			{"phone with spaces", custWith(valid, "phone", "+55 11 98765-4321"), []string{"phone"}},
			{"phone too short", custWith(valid, "phone", "+5511"), []string{"phone"}},
			{"empty phone", custWith(valid, "phone", ""), []string{"phone"}},
			{"birth date month 13", custWith(valid, "birth_date", "1990-13-01"), []string{"birth_date"}},
			{"birth date day 30 of February", custWith(valid, "birth_date", "1990-02-30"), []string{"birth_date"}},
			{"birth date Brazilian format", custWith(valid, "birth_date", "17/05/1990"), []string{"birth_date"}},
			{"birth date not padded", custWith(valid, "birth_date", "1990-5-7"), []string{"birth_date"}},
			{"birth date with time", custWith(valid, "birth_date", "1990-05-17T00:00:00Z"), []string{"birth_date"}},
			{"birth date in the future", custWith(valid, "birth_date", future), []string{"birth_date"}},
			{"gender X", custWith(valid, "gender", "X"), []string{"gender"}},
			{"gender lower case", custWith(valid, "gender", "f"), []string{"gender"}},
			{"gender word", custWith(valid, "gender", "female"), []string{"gender"}},
			{"empty external id", custWith(valid, "external_id", ""), []string{"external_id"}},
			{"name is a number", custWith(valid, "name", 123), []string{"name"}},
			{"name is an object", custWith(valid, "name", map[string]any{"first": "Ana"}), []string{"name"}},
			{"email is a boolean", custWith(valid, "email", true), []string{"email"}},
			{"cpf is a number", custWith(valid, "cpf", 52998224725), []string{"cpf"}},
			{"consent is a string", custWith(valid, "consent", "yes"), []string{"consent"}},
			{"consent flag is a string", custWith(valid, "consent", map[string]any{"marketing_email": "yes"}), []string{"consent.marketing_email"}},
			{"several problems at once", map[string]any{
				"name": "", "email": "not-an-email", "cpf": "111.111.111-11", "phone": "123",
				"birth_date": future, "gender": "X",
			}, []string{"name", "email", "cpf", "phone", "birth_date", "gender"}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := e.custDo(t, http.MethodPost, "/v1/customers", e.token, tc.body)
				custRequireError(t, r, http.StatusUnprocessableEntity, "validation_error", tc.details[0], tc.details...)
			})
		}

		badJSON := []struct{ name, body, message string }{
			{"malformed", `{"name": "Ana", "email": `, ""},
			{"not JSON", `name=Ana`, ""},
			{"empty body", ``, "the body is empty"},
			{"whitespace body", "  \n", "the body is empty"},
			{"trailing garbage", `{"name":"Ana","email":"ana@x.com","cpf":"` + cpf + `"} garbage`, ""},
			{"two objects", `{"name":"Ana","email":"ana@x.com","cpf":"` + cpf + `"}{}`, ""},
			{"trailing brace", `{"name":"Ana","email":"ana@x.com","cpf":"` + cpf + `"}}`, ""},
			{"trailing bracket", `{"name":"Ana","email":"ana@x.com","cpf":"` + cpf + `"}]`, ""},
			{"array", `[{"name":"Ana"}]`, ""},
			{"string", `"Ana"`, ""},
		}
		for _, tc := range badJSON {
			t.Run("400 "+tc.name, func(t *testing.T) {
				r := e.custRaw(t, http.MethodPost, "/v1/customers", e.token, "application/json", tc.body)
				m := custRequireError(t, r, http.StatusBadRequest, "invalid_json", "")
				if tc.message != "" {
					require.Equal(t, tc.message, m["message"])
				}
			})
		}

		for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/xml", "not a media type/"} {
			t.Run("415 "+ct, func(t *testing.T) {
				body, _ := json.Marshal(valid)
				r := e.custRaw(t, http.MethodPost, "/v1/customers", e.token, ct, string(body))
				custRequireError(t, r, http.StatusUnsupportedMediaType, "unsupported_media_type", "")
			})
		}
		require.Zero(t, e.custCount(t), "a refused create stored a customer")
	})
}

func TestCustomerAuthorization(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := custSetup(t, db)
		id := e.custCreate(t, e.token, custBasic("Ana Lima", "ana@x.com", e.custNewCPF()))
		readOnly := e.custToken(t, e.tenantID, custScopeRead)
		writeOnly := e.custToken(t, e.tenantID, custScopeWrite)
		others := e.custToken(t, e.tenantID, "campaigns:read", "campaigns:write", "loyalty:read", "loyalty:write")
		body := custBasic("Bia", "bia@x.com", e.custNewCPF())

		routes := []struct {
			method, path string
			body         any
			scope        string
		}{
			{http.MethodPost, "/v1/customers", body, custScopeWrite},
			{http.MethodPut, "/v1/customers/" + id, body, custScopeWrite},
			{http.MethodPatch, "/v1/customers/" + id, map[string]any{"name": "Bia"}, custScopeWrite},
			{http.MethodGet, "/v1/customers/" + id, nil, custScopeRead},
			{http.MethodGet, "/v1/customers", nil, custScopeRead},
		}
		for _, rt := range routes {
			t.Run(rt.method+" "+rt.path, func(t *testing.T) {
				// No token: 401 with a bearer challenge and no error code in it.
				r := e.custDo(t, rt.method, rt.path, "", rt.body)
				custRequireError(t, r, http.StatusUnauthorized, "invalid_token", "")
				require.Equal(t, `Bearer realm="fideliza"`, r.header.Get("WWW-Authenticate"))

				// A token that does not verify.
				r = e.custDo(t, rt.method, rt.path, "not.a.jwt", rt.body)
				custRequireError(t, r, http.StatusUnauthorized, "invalid_token", "")
				require.Contains(t, r.header.Get("WWW-Authenticate"), `error="invalid_token"`)

				// Another scheme.
				req, err := http.NewRequest(rt.method, e.srv.URL+rt.path, nil)
				require.NoError(t, err)
				req.SetBasicAuth("user", "pass")
				res, err := e.srv.Client().Do(req)
				require.NoError(t, err)
				res.Body.Close()
				require.Equal(t, http.StatusUnauthorized, res.StatusCode)
				require.Equal(t, `Bearer realm="fideliza"`, res.Header.Get("WWW-Authenticate"))

				// A token without the scope: 403 naming it.
				wrong := writeOnly
				if rt.scope == custScopeWrite {
					wrong = readOnly
				}
				for _, tok := range []string{wrong, others} {
					r = e.custDo(t, rt.method, rt.path, tok, rt.body)
					m := custRequireError(t, r, http.StatusForbidden, "insufficient_scope", "")
					require.Contains(t, m["error_description"], rt.scope)
					require.Contains(t, r.header.Get("WWW-Authenticate"), `error="insufficient_scope"`)
				}
			})
		}
		// Nothing was written by the refused calls.
		require.Equal(t, 1, e.custCount(t))
		require.Equal(t, "Ana Lima", e.custGet(t, id)["name"])
	})
}

func TestCustomerGet(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := custSetup(t, db)
		cpf := e.custNewCPF()
		from := time.Now()
		id := e.custCreate(t, e.token, map[string]any{
			"external_id": "erp-42", "name": "José Conceição", "email": "Jose@Example.com", "cpf": custFormatCPF(cpf),
			"phone": "+5511987654321", "birth_date": "1985-02-28", "gender": "M",
			"address": map[string]any{"street": "Rua Augusta, 100", "city": "São Paulo", "state": "SP", "zip_code": "01305-000"},
			"consent": map[string]any{"marketing_email": true, "marketing_sms": false},
		})
		to := time.Now()
		vip := e.custSegment(t, e.tenantID, "VIP", id)
		require.NoError(t, db.Ent.Customer.UpdateOneID(id).
			SetLevel(customer.LevelGold).SetPointsBalance(1500).
			SetLifetimeValue(decimal.RequireFromString("12345.67")).Exec(custSys()))
		to2 := time.Now()

		got := e.custGet(t, id)
		require.Equal(t, custSorted("id", "external_id", "name", "email", "cpf", "phone", "birth_date", "gender", "address",
			"level", "points_balance", "lifetime_value", "segments", "consent", "created_at", "updated_at"), custKeys(got))
		created := custRequireTime(t, got["created_at"], from, to)
		updated := custRequireTime(t, got["updated_at"], from, to2)
		require.False(t, updated.Before(created))
		consent := got["consent"].(map[string]any)
		custRequireTime(t, consent["updated_at"], from, to)
		require.Equal(t, map[string]any{
			"id":             id,
			"external_id":    "erp-42",
			"name":           "José Conceição",
			"email":          "Jose@Example.com",
			"cpf":            "***.***.***-" + cpf[9:],
			"phone":          "+5511987654321",
			"birth_date":     "1985-02-28",
			"gender":         "M",
			"address":        map[string]any{"street": "Rua Augusta, 100", "city": "São Paulo", "state": "SP", "zip_code": "01305-000"},
			"level":          "gold",
			"points_balance": json.Number("1500"),
			"lifetime_value": json.Number("12345.67"),
			"segments":       []any{vip},
			"consent":        map[string]any{"marketing_email": true, "marketing_whatsapp": false, "data_sharing": false, "marketing_sms": false, "updated_at": consent["updated_at"]},
			"created_at":     got["created_at"],
			"updated_at":     got["updated_at"],
		}, got)
		require.Regexp(t, `^\*\*\*\.\*\*\*\.\*\*\*-\d\d$`, got["cpf"])

		// A bare customer: optional fields are null, segments an empty array.
		bare := e.custCreate(t, e.token, custBasic("Bia", "bia@x.com", e.custNewCPF()))
		b := e.custGet(t, bare)
		for _, k := range []string{"external_id", "phone", "birth_date", "gender", "address"} {
			require.Contains(t, b, k)
			require.Nil(t, b[k], k)
		}
		require.Equal(t, []any{}, b["segments"])
		require.Equal(t, map[string]any{"marketing_email": false, "marketing_whatsapp": false, "data_sharing": false, "marketing_sms": false, "updated_at": nil}, b["consent"])
		require.Equal(t, json.Number("0"), b["lifetime_value"])

		// Unknown ids and ids of another tenant are not found, and nothing leaks.
		otherTenant := e.custTenant(t, "Outra Loja")
		tokB := e.custToken(t, otherTenant, custScopeRead, custScopeWrite)
		theirs := e.custCreate(t, tokB, custBasic("Carla", "carla@x.com", e.custNewCPF()))
		notFound := []struct{ name, token, id string }{
			{"unknown id", e.token, "cus_01jd0000000000000000000000"},
			{"not an id", e.token, "nope"},
			{"another tenant's customer", e.token, theirs},
			{"mine seen by another tenant", tokB, id},
		}
		for _, tc := range notFound {
			t.Run("404 "+tc.name, func(t *testing.T) {
				r := e.custDo(t, http.MethodGet, "/v1/customers/"+tc.id, tc.token, nil)
				m := custRequireError(t, r, http.StatusNotFound, "not_found", "")
				require.Equal(t, map[string]any{"error": "not_found", "message": "customer not found"}, m)
				for _, method := range []string{http.MethodPut, http.MethodPatch} {
					r := e.custDo(t, method, "/v1/customers/"+tc.id, tc.token, custBasic("X", "x@x.com", e.custNewCPF()))
					custRequireError(t, r, http.StatusNotFound, "not_found", "")
				}
			})
		}
		require.Equal(t, "José Conceição", e.custGet(t, id)["name"], "another tenant changed a customer")
		require.Equal(t, 1, e.custList(t, tokB, nil).total)
	})
}

func TestCustomerList(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := custSetup(t, db)
		const n = 45
		var created []string // oldest first
		for i := range n {
			created = append(created, e.custCreate(t, e.token, custBasic(fmt.Sprintf("Cliente %02d", i), fmt.Sprintf("cliente%02d@loja.com", i), e.custNewCPF())))
		}
		newestFirst := custReversed(created)
		// Another tenant's customers never show.
		otherTenant := e.custTenant(t, "Outra Loja")
		tokB := e.custToken(t, otherTenant, custScopeRead, custScopeWrite)
		e.custCreate(t, tokB, custBasic("Cliente de outra loja", "cliente00@loja.com", e.custNewCPF()))

		t.Run("default page of 20, newest first", func(t *testing.T) {
			p := e.custList(t, e.token, nil)
			require.Equal(t, newestFirst[:20], p.ids)
			require.True(t, p.hasMore)
			require.Equal(t, n, p.total)
		})

		t.Run("list items carry exactly the documented fields", func(t *testing.T) {
			p := e.custList(t, e.token, url.Values{"limit": {"1"}})
			require.Len(t, p.items, 1)
			item := p.items[0]
			require.Equal(t, custSorted("id", "external_id", "name", "email", "cpf", "phone", "level", "points_balance",
				"segments", "created_at", "updated_at"), custKeys(item))
			full := e.custGet(t, item["id"].(string))
			for k, v := range item {
				require.Equal(t, full[k], v, "list item and full record differ on %s", k)
			}
			require.Equal(t, "Cliente 44", item["name"])
			require.Regexp(t, `^\*\*\*\.\*\*\*\.\*\*\*-\d\d$`, item["cpf"])
			require.Equal(t, []any{}, item["segments"])
		})

		for _, limit := range []struct {
			limit string
			pages int
		}{{"1", n}, {"7", 7}, {"20", 3}, {"45", 1}, {"44", 2}, {"100", 1}} {
			t.Run("walk with limit "+limit.limit, func(t *testing.T) {
				all := e.custWalk(t, url.Values{"limit": {limit.limit}}, limit.pages)
				// No duplicate and no gap: exactly every customer, newest first.
				require.Equal(t, newestFirst, all)
			})
		}

		t.Run("last page", func(t *testing.T) {
			first := e.custList(t, e.token, url.Values{"limit": {"40"}})
			require.Len(t, first.ids, 40)
			last := e.custList(t, e.token, url.Values{"limit": {"40"}, "cursor": {first.nextCursor.(string)}})
			require.Equal(t, newestFirst[40:], last.ids)
			require.False(t, last.hasMore)
			require.Nil(t, last.nextCursor)
			require.Equal(t, n, last.total)
		})

		for _, bad := range []string{"0", "101", "abc", "-1", "1.5", "20abc", "1e2"} {
			t.Run("limit "+bad, func(t *testing.T) {
				r := e.custDo(t, http.MethodGet, "/v1/customers?limit="+url.QueryEscape(bad), e.token, nil)
				custRequireError(t, r, http.StatusUnprocessableEntity, "validation_error", "limit", "limit")
			})
		}

		t.Run("bad cursors", func(t *testing.T) {
			tampered := func(c ent.Cursor) string {
				var b strings.Builder
				c.MarshalGQL(&b)
				return strings.Trim(b.String(), `"`)
			}
			for _, cursor := range []string{
				"not-a-cursor!!", "bm90LWEtY3Vyc29y", "e30",
				tampered(ent.Cursor{ID: created[0], Value: "yesterday"}),
				tampered(ent.Cursor{ID: created[0], Value: 42}),
				tampered(ent.Cursor{ID: "", Value: time.Now()}),
				tampered(ent.Cursor{ID: "cmp_01jd0000000000000000000000"}),
				tampered(ent.Cursor{ID: created[0], Value: []any{1, 2}}),
			} {
				t.Run(cursor, func(t *testing.T) {
					r := e.custDo(t, http.MethodGet, "/v1/customers?cursor="+url.QueryEscape(cursor), e.token, nil)
					custRequireError(t, r, http.StatusUnprocessableEntity, "validation_error", "cursor", "cursor")
				})
			}
			// Every problem of the query at once.
			r := e.custDo(t, http.MethodGet, "/v1/customers?limit=0&created_after=soon&cursor=nope", e.token, nil)
			custRequireError(t, r, http.StatusUnprocessableEntity, "validation_error", "limit", "limit", "cursor", "created_after")
		})

		t.Run("segment filter and its total", func(t *testing.T) {
			members := []string{created[3], created[10], created[30]}
			vip := e.custSegment(t, e.tenantID, "VIP", members...)
			// created[10] is in two segments: it must not count twice.
			gold := e.custSegment(t, e.tenantID, "Ouro", created[10], created[11])
			e.custSegment(t, otherTenant, "VIP da outra loja")

			p := e.custList(t, e.token, url.Values{"segment_id": {vip}, "limit": {"2"}})
			require.Equal(t, []string{created[30], created[10]}, p.ids)
			require.True(t, p.hasMore)
			require.Equal(t, 3, p.total)
			require.Equal(t, []any{vip}, p.items[0]["segments"])
			require.ElementsMatch(t, []any{vip, gold}, p.items[1]["segments"])
			p2 := e.custList(t, e.token, url.Values{"segment_id": {vip}, "limit": {"2"}, "cursor": {p.nextCursor.(string)}})
			require.Equal(t, []string{created[3]}, p2.ids)
			require.False(t, p2.hasMore)
			require.Equal(t, 3, p2.total)

			require.Equal(t, 3, e.custList(t, e.token, url.Values{"segment_id": {vip}, "limit": {"1"}}).total)
			p3 := e.custList(t, e.token, url.Values{"segment_id": {gold}})
			require.Equal(t, []string{created[11], created[10]}, p3.ids)
			require.Equal(t, 2, p3.total)
			// Segment and search together.
			p4 := e.custList(t, e.token, url.Values{"segment_id": {vip}, "search": {"cliente 10"}})
			require.Equal(t, []string{created[10]}, p4.ids)
			require.Equal(t, 1, p4.total)
			// An unknown segment, or another tenant's, has no members.
			for _, seg := range []string{"seg_01jd0000000000000000000000"} {
				p := e.custList(t, e.token, url.Values{"segment_id": {seg}})
				require.Empty(t, p.ids)
				require.Equal(t, 0, p.total)
			}
			// The full record lists the segments too.
			require.ElementsMatch(t, []any{vip, gold}, e.custGet(t, created[10])["segments"])
		})

		t.Run("search total counts the filtered set", func(t *testing.T) {
			// "cliente 1" matches Cliente 1x (10..19) only.
			p := e.custList(t, e.token, url.Values{"search": {"Cliente 1"}, "limit": {"3"}})
			require.Equal(t, 10, p.total)
			require.Equal(t, []string{created[19], created[18], created[17]}, p.ids)
			all := e.custWalk(t, url.Values{"search": {"Cliente 1"}, "limit": {"3"}}, 4)
			require.Equal(t, custReversed(created[10:20]), all)
		})

		t.Run("cursors are stable under inserts", func(t *testing.T) {
			p1 := e.custList(t, e.token, url.Values{"limit": {"10"}})
			require.Equal(t, newestFirst[:10], p1.ids)
			inserted := e.custCreate(t, e.token, custBasic("Cliente novo", "novo@loja.com", e.custNewCPF()))
			p2 := e.custList(t, e.token, url.Values{"limit": {"10"}, "cursor": {p1.nextCursor.(string)}})
			require.Equal(t, newestFirst[10:20], p2.ids, "an insert shifted the next page")
			require.Equal(t, n+1, p2.total)
			p3 := e.custList(t, e.token, url.Values{"limit": {"10"}, "cursor": {p2.nextCursor.(string)}})
			require.Equal(t, newestFirst[20:30], p3.ids)
			fresh := e.custList(t, e.token, url.Values{"limit": {"10"}})
			require.Equal(t, append([]string{inserted}, newestFirst[:9]...), fresh.ids)
		})
	})
}

func TestCustomerListCreatedAfter(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := custSetup(t, db)
		at := func(s string) time.Time {
			ts, err := time.Parse(time.RFC3339, s)
			require.NoError(t, err)
			return ts
		}
		ids := map[string]string{}
		for _, c := range []struct{ name, at string }{
			{"jan", "2026-01-10T12:00:00Z"},
			{"feb", "2026-02-10T12:00:00Z"},
			{"mar", "2026-03-10T12:00:00Z"},
		} {
			cpf := e.custNewCPF()
			row, err := db.Ent.Customer.Create().SetTenantID(e.tenantID).SetName(c.name).SetEmail(c.name + "@x.com").
				SetDocument(cpf).SetCreatedAt(at(c.at)).Save(custSys())
			require.NoError(t, err)
			ids[c.name] = row.ID
		}
		cases := []struct {
			after string
			want  []string
		}{
			{"2026-01-01", []string{"mar", "feb", "jan"}},
			{"2026-02-01", []string{"mar", "feb"}},
			{"2026-02-10T12:00:00Z", []string{"mar"}}, // strictly after
			{"2026-02-10T09:00:00-03:00", []string{"mar"}},
			{"2026-02-10T08:59:59-03:00", []string{"mar", "feb"}},
			{"2026-02-10T11:59:59.999Z", []string{"mar", "feb"}},
			{"2026-03-10T12:00:00+00:00", nil},
			{"2027-01-01", nil},
		}
		for _, tc := range cases {
			t.Run(tc.after, func(t *testing.T) {
				p := e.custList(t, e.token, url.Values{"created_after": {tc.after}})
				var want []string
				for _, w := range tc.want {
					want = append(want, ids[w])
				}
				require.Equal(t, want, p.ids)
				require.Equal(t, len(want), p.total)
				require.False(t, p.hasMore)
			})
		}
		// created_after with pagination keeps the filter on every page.
		p := e.custList(t, e.token, url.Values{"created_after": {"2026-01-01"}, "limit": {"2"}})
		require.Equal(t, []string{ids["mar"], ids["feb"]}, p.ids)
		require.Equal(t, 3, p.total)
		p = e.custList(t, e.token, url.Values{"created_after": {"2026-01-01"}, "limit": {"2"}, "cursor": {p.nextCursor.(string)}})
		require.Equal(t, []string{ids["jan"]}, p.ids)

		for _, bad := range []string{"yesterday", "2026-13-01", "10/02/2026", "2026-02-10T12:00:00", "2026-02-10 12:00:00Z", "1700000000"} {
			t.Run("malformed "+bad, func(t *testing.T) {
				r := e.custDo(t, http.MethodGet, "/v1/customers?created_after="+url.QueryEscape(bad), e.token, nil)
				custRequireError(t, r, http.StatusUnprocessableEntity, "validation_error", "created_after", "created_after")
			})
		}
	})
}

func TestCustomerSearch(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := custSetup(t, db)
		joseCPF, mariaCPF, pedroCPF := e.custNewCPF(), e.custNewCPF(), e.custNewCPF()
		jose := e.custCreate(t, e.token, custWith(custBasic("José Conceição", "jc@example.com", joseCPF), "external_id", "crm-777"))
		maria := e.custCreate(t, e.token, custWith(custBasic("Maria Souza", "Maria.Souza@Loja.com.br", custFormatCPF(mariaCPF)), "external_id", "crm-778"))
		pedro := e.custCreate(t, e.token, custBasic("Pedro Álvares", "pedro@example.com", pedroCPF))
		// The same person in another tenant is never found.
		otherTenant := e.custTenant(t, "Outra Loja")
		e.custCreate(t, e.custToken(t, otherTenant, custScopeWrite), custWith(custBasic("José Conceição", "jc@example.com", joseCPF), "external_id", "crm-777"))

		cases := []struct {
			search string
			want   []string
		}{
			{"jose conceicao", []string{jose}},
			{"José Conceição", []string{jose}},
			{"JOSÉ CONCEIÇÃO", []string{jose}},
			{"CONCEI", []string{jose}},
			{"conceição", []string{jose}},
			{"  jose   conceicao ", []string{jose}},
			{"alvares", []string{pedro}},
			{"souza@loja", []string{maria}},
			{"MARIA.SOUZA@LOJA.COM.BR", []string{maria}},
			{"@example.com", []string{pedro, jose}},
			{"example", []string{pedro, jose}},
			{mariaCPF, []string{maria}},
			{custFormatCPF(mariaCPF), []string{maria}},
			{custFormatCPF(joseCPF), []string{jose}},
			{pedroCPF, []string{pedro}},
			{"crm-777", []string{jose}},
			{"crm-778", []string{maria}},
			{"nobody", nil},
			{"crm-779", nil},
			{"%", nil},
			{"_", nil},
			{"jo", []string{jose}}, // shorter than a trigram
			{"za", []string{maria}},
			{`souza"`, nil},
			{`"souza"`, nil},
		}
		for _, tc := range cases {
			t.Run(tc.search, func(t *testing.T) {
				p := e.custList(t, e.token, url.Values{"search": {tc.search}})
				require.Equal(t, tc.want, p.ids)
				require.Equal(t, len(tc.want), p.total)
			})
		}
		// An empty search is no filter.
		require.Equal(t, 3, e.custList(t, e.token, url.Values{"search": {""}}).total)
		// Search pages like the plain list, with the total of the matches.
		p := e.custList(t, e.token, url.Values{"search": {"@example.com"}, "limit": {"1"}})
		require.Equal(t, []string{pedro}, p.ids)
		require.True(t, p.hasMore)
		require.Equal(t, 2, p.total)
		p = e.custList(t, e.token, url.Values{"search": {"@example.com"}, "limit": {"1"}, "cursor": {p.nextCursor.(string)}})
		require.Equal(t, []string{jose}, p.ids)
		require.False(t, p.hasMore)
		require.Equal(t, 2, p.total)
		// A renamed customer is found by the new name only (the search index
		// follows updates).
		r := e.custDo(t, http.MethodPatch, "/v1/customers/"+pedro, e.token, map[string]any{"name": "Pedro Cabral", "email": "pc@loja.example"})
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		require.Equal(t, []string{pedro}, e.custList(t, e.token, url.Values{"search": {"cabral"}}).ids)
		require.Equal(t, []string{pedro}, e.custList(t, e.token, url.Values{"search": {"pc@loja"}}).ids)
		require.Empty(t, e.custList(t, e.token, url.Values{"search": {"alvares"}}).ids)
		require.Equal(t, []string{jose}, e.custList(t, e.token, url.Values{"search": {"@example.com"}}).ids)
	})
}

// custFull is the create body of a customer with every field set.
func custFull(name, email, cpf string) map[string]any {
	return map[string]any{
		"external_id": "erp-1", "name": name, "email": email, "cpf": cpf,
		"phone": "+5511987654321", "birth_date": "1990-05-17", "gender": "F",
		"address": map[string]any{"street": "Rua Augusta, 100", "city": "São Paulo", "state": "SP", "zip_code": "01305-000"},
		"consent": map[string]any{"marketing_email": true, "marketing_sms": true},
	}
}

// custWithout returns the record without the keys that change on every
// write, for comparing two records.
func custWithout(m map[string]any, keys ...string) map[string]any {
	out := custWith(m)
	for _, k := range append(keys, "updated_at") {
		delete(out, k)
	}
	return out
}

func TestCustomerReplace(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := custSetup(t, db)
		cpf, otherCPF := e.custNewCPF(), e.custNewCPF()
		id := e.custCreate(t, e.token, custFull("Ana Lima", "ana@x.com", cpf))
		e.custCreate(t, e.token, custBasic("Bia Reis", "Bia@X.com", otherCPF))
		before := e.custGet(t, id)
		path := "/v1/customers/" + id

		t.Run("create fields are required", func(t *testing.T) {
			cases := []struct {
				name    string
				body    map[string]any
				details []string
			}{
				{"no name", custWith(custFull("Ana", "ana@x.com", cpf), "name", nil), []string{"name"}},
				{"no email", custWith(custFull("Ana", "ana@x.com", cpf), "email", nil), []string{"email"}},
				{"no cpf", custWith(custFull("Ana", "ana@x.com", cpf), "cpf", nil), []string{"cpf"}},
				{"only optional fields", map[string]any{"phone": "+5511987654321"}, []string{"name", "email", "cpf"}},
				{"null name", custWith(custBasic("Ana", "ana@x.com", cpf), "name", nil, "phone", nil), []string{"name"}},
				{"bad phone", custWith(custBasic("Ana", "ana@x.com", cpf), "phone", "987654321"), []string{"phone"}},
				{"bad CPF", custBasic("Ana", "ana@x.com", "111.111.111-11"), []string{"cpf"}},
			}
			cases[4].body["name"] = nil // present as null
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					r := e.custDo(t, http.MethodPut, path, e.token, tc.body)
					custRequireError(t, r, http.StatusUnprocessableEntity, "validation_error", tc.details[0], tc.details...)
				})
			}
			require.Equal(t, before, e.custGet(t, id), "a refused PUT changed the customer")
		})

		t.Run("409 when the e-mail or CPF is another customer's", func(t *testing.T) {
			for _, tc := range []struct {
				body  map[string]any
				field string
			}{
				{custBasic("Ana", "Bia@X.com", cpf), "email"},
				{custBasic("Ana", "bia@x.com", cpf), "email"},
				{custBasic("Ana", "ana@x.com", otherCPF), "cpf"},
				{custBasic("Ana", "ana@x.com", custFormatCPF(otherCPF)), "cpf"},
			} {
				r := e.custDo(t, http.MethodPut, path, e.token, tc.body)
				custRequireError(t, r, http.StatusConflict, "duplicate_customer", tc.field)
			}
			require.Equal(t, before, e.custGet(t, id), "a refused PUT changed the customer")
		})

		t.Run("404 for an unknown id", func(t *testing.T) {
			r := e.custDo(t, http.MethodPut, "/v1/customers/cus_01jd0000000000000000000000", e.token, custBasic("Ana", "nova@x.com", e.custNewCPF()))
			m := custRequireError(t, r, http.StatusNotFound, "not_found", "")
			require.Equal(t, "customer not found", m["message"])
		})

		t.Run("omitted optional fields are cleared", func(t *testing.T) {
			from := time.Now()
			r := e.custDo(t, http.MethodPut, path, e.token, custBasic("Ana Maria Lima", "ANA@x.com", custFormatCPF(cpf)))
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			got := r.obj(t)
			custRequireTime(t, got["updated_at"], from, time.Now())
			consent := got["consent"].(map[string]any)
			// Both consents were given; a replacement without them withdraws them.
			custRequireTime(t, consent["updated_at"], from, time.Now())
			require.Equal(t, map[string]any{
				"id": id, "external_id": nil, "name": "Ana Maria Lima", "email": "ANA@x.com", "cpf": custMasked(cpf),
				"phone": nil, "birth_date": nil, "gender": nil, "address": nil,
				"level": "bronze", "points_balance": json.Number("0"), "lifetime_value": json.Number("0"), "segments": []any{},
				"consent":    map[string]any{"marketing_email": false, "marketing_whatsapp": false, "data_sharing": false, "marketing_sms": false, "updated_at": consent["updated_at"]},
				"created_at": before["created_at"], "updated_at": got["updated_at"],
			}, got)
			require.Equal(t, got, e.custGet(t, id), "the PUT answer is not the stored record")
		})

		t.Run("replaces with every field", func(t *testing.T) {
			body := custFull("Ana Lima", "ana@x.com", cpf)
			body["external_id"] = "erp-2"
			body["address"] = map[string]any{"city": "Recife"} // the other address fields are cleared
			body["gender"] = "NB"
			r := e.custDo(t, http.MethodPut, path, e.token, body)
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			got := r.obj(t)
			require.Equal(t, "erp-2", got["external_id"])
			require.Equal(t, "NB", got["gender"])
			require.Equal(t, "+5511987654321", got["phone"])
			require.Equal(t, "1990-05-17", got["birth_date"])
			require.Equal(t, map[string]any{"street": nil, "city": "Recife", "state": nil, "zip_code": nil}, got["address"])
			require.Equal(t, true, got["consent"].(map[string]any)["marketing_sms"])
		})
		require.Equal(t, 2, e.custCount(t))
	})
}

func TestCustomerPatch(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := custSetup(t, db)
		cpf, otherCPF := e.custNewCPF(), e.custNewCPF()
		id := e.custCreate(t, e.token, custFull("Ana Lima", "ana@x.com", cpf))
		e.custCreate(t, e.token, custBasic("Bia Reis", "bia@x.com", otherCPF))
		path := "/v1/customers/" + id

		// Each step patches the current record; want is what changes.
		steps := []struct {
			name        string
			contentType string
			body        string
			want        map[string]any
		}{
			{"one field", "", `{"phone":"+5521912345678"}`, map[string]any{"phone": "+5521912345678"}},
			{"empty patch", "", `{}`, map[string]any{}},
			{"merge-patch content type", "application/merge-patch+json", `{"name":"Ana L. Lima"}`, map[string]any{"name": "Ana L. Lima"}},
			{"null clears the phone", "", `{"phone":null}`, map[string]any{"phone": nil}},
			{"null clears several", "", `{"birth_date":null,"gender":null,"external_id":null}`,
				map[string]any{"birth_date": nil, "gender": nil, "external_id": nil}},
			{"nested address merge keeps the street", "", `{"address":{"city":"Campinas"}}`,
				map[string]any{"address": map[string]any{"street": "Rua Augusta, 100", "city": "Campinas", "state": "SP", "zip_code": "01305-000"}}},
			{"null inside address clears one field", "", `{"address":{"zip_code":null}}`,
				map[string]any{"address": map[string]any{"street": "Rua Augusta, 100", "city": "Campinas", "state": "SP", "zip_code": nil}}},
			{"null address clears it", "", `{"address":null}`, map[string]any{"address": nil}},
			{"address again", "", `{"address":{"street":"Av. Paulista, 1"}}`,
				map[string]any{"address": map[string]any{"street": "Av. Paulista, 1", "city": nil, "state": nil, "zip_code": nil}}},
			{"own CPF formatted, own e-mail in another case", "", `{"cpf":"` + custFormatCPF(cpf) + `","email":"Ana@X.com"}`,
				map[string]any{"email": "Ana@X.com"}},
			{"synchronization body", "", `{"external_id":"crm-9","name":"Ana Lima","email":"ana.lima@x.com","cpf":"` + cpf + `","phone":"+5511900000000"}`,
				map[string]any{"external_id": "crm-9", "name": "Ana Lima", "email": "ana.lima@x.com", "phone": "+5511900000000"}},
		}
		current := e.custGet(t, id)
		for _, st := range steps {
			t.Run(st.name, func(t *testing.T) {
				ct := st.contentType
				if ct == "" {
					ct = "application/json"
				}
				from := time.Now()
				r := e.custRaw(t, http.MethodPatch, path, e.token, ct, st.body)
				require.Equal(t, http.StatusOK, r.status, "%s", r.body)
				got := r.obj(t)
				custRequireTime(t, got["updated_at"], from, time.Now())
				want := custWithout(current)
				for k, v := range st.want {
					want[k] = v
				}
				require.Equal(t, want, custWithout(got))
				require.Equal(t, got, e.custGet(t, id), "the PATCH answer is not the stored record")
				current = got
			})
		}

		refused := []struct {
			name, body string
			status     int
			code       string
			details    []string
		}{
			{"null name", `{"name":null}`, 422, "validation_error", []string{"name"}},
			{"null email", `{"email":null}`, 422, "validation_error", []string{"email"}},
			{"null cpf", `{"cpf":null}`, 422, "validation_error", []string{"cpf"}},
			{"all required null", `{"name":null,"email":null,"cpf":null,"phone":null}`, 422, "validation_error", []string{"name", "email", "cpf"}},
			{"empty name", `{"name":""}`, 422, "validation_error", []string{"name"}},
			{"bad phone", `{"phone":"9999"}`, 422, "validation_error", []string{"phone"}},
			{"bad gender", `{"gender":"X"}`, 422, "validation_error", []string{"gender"}},
			{"future birth date", `{"birth_date":"2999-01-01"}`, 422, "validation_error", []string{"birth_date"}},
			{"bad CPF", `{"cpf":"123.456.789-00"}`, 422, "validation_error", []string{"cpf"}},
			{"name of wrong type", `{"name":["Ana"]}`, 422, "validation_error", []string{"name"}},
			{"address of wrong type", `{"address":"Rua X"}`, 422, "validation_error", []string{"address"}},
			{"address city of wrong type", `{"address":{"city":1}}`, 422, "validation_error", []string{"address.city"}},
			{"another customer's e-mail", `{"email":"BIA@x.com"}`, 409, "duplicate_customer", []string{"email"}},
			{"another customer's CPF", `{"cpf":"` + custFormatCPF(otherCPF) + `"}`, 409, "duplicate_customer", []string{"cpf"}},
			{"malformed JSON", `{"name":`, 400, "invalid_json", nil},
			{"trailing data", `{"name":"X"} {}`, 400, "invalid_json", nil},
		}
		for _, tc := range refused {
			t.Run(tc.name, func(t *testing.T) {
				r := e.custRaw(t, http.MethodPatch, path, e.token, "application/merge-patch+json", tc.body)
				field := ""
				if len(tc.details) > 0 {
					field = tc.details[0]
				}
				if tc.code == "validation_error" {
					custRequireError(t, r, tc.status, tc.code, field, tc.details...)
				} else {
					custRequireError(t, r, tc.status, tc.code, field)
				}
			})
		}
		t.Run("415", func(t *testing.T) {
			r := e.custRaw(t, http.MethodPatch, path, e.token, "text/plain", `{"name":"X"}`)
			custRequireError(t, r, http.StatusUnsupportedMediaType, "unsupported_media_type", "")
		})
		t.Run("404", func(t *testing.T) {
			r := e.custDo(t, http.MethodPatch, "/v1/customers/cus_01jd0000000000000000000000", e.token, map[string]any{"name": "X"})
			custRequireError(t, r, http.StatusNotFound, "not_found", "")
		})
		require.Equal(t, custWithout(current), custWithout(e.custGet(t, id)), "a refused PATCH changed the customer")
		require.Equal(t, current["updated_at"], e.custGet(t, id)["updated_at"])
	})
}

func TestCustomerConsentUpdatedAt(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := custSetup(t, db)
		cpf := e.custNewCPF()
		id := e.custCreate(t, e.token, custBasic("Ana Lima", "ana@x.com", cpf))
		path := "/v1/customers/" + id
		// No consent given yet: no consent time.
		require.Equal(t, map[string]any{"marketing_email": false, "marketing_whatsapp": false, "data_sharing": false, "marketing_sms": false, "updated_at": nil}, e.custGet(t, id)["consent"])

		// Timestamps are rendered to the second: pin the stored consent time
		// in the past so that any change of it shows.
		const pinned = "2026-01-02T03:04:05Z"
		pin := func(t *testing.T) {
			ts, _ := time.Parse(time.RFC3339, pinned)
			require.NoError(t, db.Ent.Customer.UpdateOneID(id).SetConsentUpdatedAt(ts).Exec(custSys()))
		}
		pin(t)
		steps := []struct {
			name          string
			method, body  string
			email, sms    bool
			consentMoves  bool
			keepPinnedNow bool
		}{
			{"PATCH the same flags", http.MethodPatch, `{"consent":{"marketing_email":false,"marketing_sms":false}}`, false, false, false, false},
			{"PATCH another field", http.MethodPatch, `{"name":"Ana M. Lima"}`, false, false, false, false},
			{"PATCH an empty consent", http.MethodPatch, `{"consent":{}}`, false, false, false, false},
			{"PATCH a null consent with no consent given", http.MethodPatch, `{"consent":null}`, false, false, false, false},
			{"PATCH one flag", http.MethodPatch, `{"consent":{"marketing_email":true}}`, true, false, true, false},
			{"PATCH the same flag again", http.MethodPatch, `{"consent":{"marketing_email":true}}`, true, false, false, false},
			{"PATCH the other flag to its value", http.MethodPatch, `{"consent":{"marketing_sms":false}}`, true, false, false, false},
			{"PATCH the other flag", http.MethodPatch, `{"consent":{"marketing_sms":true}}`, true, true, true, false},
			{"PUT with the same flags", http.MethodPut, `{"name":"Ana","email":"ana@x.com","cpf":"` + cpf + `","consent":{"marketing_email":true,"marketing_sms":true}}`, true, true, false, false},
			{"PUT without consent withdraws it", http.MethodPut, `{"name":"Ana","email":"ana@x.com","cpf":"` + cpf + `"}`, false, false, true, false},
			{"PUT without consent again", http.MethodPut, `{"name":"Ana","email":"ana@x.com","cpf":"` + cpf + `"}`, false, false, false, false},
			{"PATCH both flags", http.MethodPatch, `{"consent":{"marketing_email":true,"marketing_sms":true}}`, true, true, true, false},
			{"PATCH a null consent withdraws both", http.MethodPatch, `{"consent":null}`, false, false, true, false},
		}
		for _, st := range steps {
			t.Run(st.name, func(t *testing.T) {
				pin(t)
				from := time.Now()
				r := e.custRaw(t, st.method, path, e.token, "application/json", st.body)
				require.Equal(t, http.StatusOK, r.status, "%s", r.body)
				consent := r.obj(t)["consent"].(map[string]any)
				require.Equal(t, st.email, consent["marketing_email"])
				require.Equal(t, st.sms, consent["marketing_sms"])
				if st.consentMoves {
					custRequireTime(t, consent["updated_at"], from, time.Now())
				} else {
					require.Equal(t, pinned, consent["updated_at"])
				}
				require.Equal(t, consent, e.custGet(t, id)["consent"])
			})
		}

		// Consent given at creation is timed at creation.
		from := time.Now()
		other := e.custCreate(t, e.token, custWith(custBasic("Bia", "bia@x.com", e.custNewCPF()), "consent", map[string]any{"marketing_sms": true}))
		c := e.custGet(t, other)["consent"].(map[string]any)
		require.Equal(t, false, c["marketing_email"])
		require.Equal(t, true, c["marketing_sms"])
		custRequireTime(t, c["updated_at"], from, time.Now())
	})
}

// custSync is the CRM synchronization of the document: search by the
// external id, PATCH the first match, otherwise POST. It returns the
// method used and the customer id.
func (e *custEnv) custSync(t *testing.T, token string, body map[string]any) (string, string) {
	t.Helper()
	p := e.custList(t, token, url.Values{"search": {body["external_id"].(string)}})
	if len(p.ids) > 0 {
		r := e.custDo(t, http.MethodPatch, "/v1/customers/"+p.ids[0], token, body)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		return http.MethodPatch, p.ids[0]
	}
	return http.MethodPost, e.custCreate(t, token, body)
}

func TestCRMSynchronization(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := custSetup(t, db)
		token := e.custToken(t, e.tenantID, custScopeRead, custScopeWrite)
		// Customers whose e-mail or name looks like the external id must not
		// be taken for it.
		e.custCreate(t, token, custWith(custBasic("Carlos", "carlos@x.com", e.custNewCPF()), "external_id", "crm-10"))
		cpf := e.custNewCPF()

		first := map[string]any{"external_id": "crm-1", "name": "Ana Lima", "email": "ana@x.com", "cpf": cpf, "phone": "+5511987654321"}
		method, id := e.custSync(t, token, first)
		require.Equal(t, http.MethodPost, method)

		second := map[string]any{"external_id": "crm-1", "name": "Ana Lima Souza", "email": "ana.souza@x.com", "cpf": custFormatCPF(cpf), "phone": "+5511912345678"}
		method, id2 := e.custSync(t, token, second)
		require.Equal(t, http.MethodPatch, method, "the second run must update the customer it created")
		require.Equal(t, id, id2)

		// Running it again changes nothing and creates nothing.
		method, id3 := e.custSync(t, token, second)
		require.Equal(t, http.MethodPatch, method)
		require.Equal(t, id, id3)

		p := e.custList(t, token, url.Values{"search": {"crm-1"}})
		require.Equal(t, []string{id}, p.ids)
		require.Equal(t, 1, p.total)
		require.Equal(t, 2, e.custCount(t))
		got := e.custGet(t, id)
		require.Equal(t, "crm-1", got["external_id"])
		require.Equal(t, "Ana Lima Souza", got["name"])
		require.Equal(t, "ana.souza@x.com", got["email"])
		require.Equal(t, "+5511912345678", got["phone"])
		require.Equal(t, custMasked(cpf), got["cpf"])
	})
}

func TestCustomerConcurrentCreate(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := custSetup(t, db)
		const n = 20
		cases := []struct {
			name  string
			body  func(i int, cpf string) map[string]any
			field string // "" when either field may clash first
		}{
			{"same e-mail and CPF", func(i int, cpf string) map[string]any {
				return custBasic(fmt.Sprintf("Ana %d", i), "ana@x.com", cpf)
			}, ""},
			{"same e-mail in other cases", func(i int, cpf string) map[string]any {
				return custBasic("Bia", []string{"bia@x.com", "Bia@X.com", "BIA@X.COM", " bia@x.com"}[i%4], e.custNewCPF())
			}, "email"},
			{"same CPF in other formats", func(i int, cpf string) map[string]any {
				return custBasic("Carla", fmt.Sprintf("carla%d@x.com", i), []string{cpf, custFormatCPF(cpf)}[i%2])
			}, "cpf"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				before := e.custCount(t)
				cpf := e.custNewCPF()
				bodies := make([][]byte, n)
				for i := range n {
					bodies[i], _ = json.Marshal(tc.body(i, cpf))
				}
				start := make(chan struct{})
				results := make([]custResp, n)
				var wg sync.WaitGroup
				for i := range n {
					wg.Go(func() {
						<-start
						req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/v1/customers", bytes.NewReader(bodies[i]))
						req.Header.Set("Content-Type", "application/json")
						req.Header.Set("Authorization", "Bearer "+e.token)
						res, err := e.srv.Client().Do(req)
						if err != nil {
							results[i] = custResp{status: -1, body: []byte(err.Error())}
							return
						}
						defer res.Body.Close()
						b, _ := io.ReadAll(res.Body)
						results[i] = custResp{status: res.StatusCode, header: res.Header, body: b}
					})
				}
				close(start)
				wg.Wait()
				created := 0
				for _, r := range results {
					e.custRequireNoCPF(t, "concurrent create response", string(r.body))
					if r.status == http.StatusCreated {
						created++
						continue
					}
					m := custRequireError(t, r, http.StatusConflict, "duplicate_customer", tc.field)
					require.Contains(t, []any{"email", "cpf"}, m["field"])
				}
				require.Equal(t, 1, created, "exactly one create must win")
				require.Equal(t, before+1, e.custCount(t), "exactly one row must be stored")
			})
		}
	})
}

func TestCustomerCPFNeverLogged(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := custSetup(t, db)
		cpf := e.custNewCPF()
		requests := 0
		do := func(method, path string, body any) custResp {
			requests++
			return e.custDo(t, method, path, e.token, body)
		}

		id := e.custCreate(t, e.token, custFull("Ana Lima", "ana@x.com", custFormatCPF(cpf)))
		requests++
		// Sequential duplicates, on the CPF in both formats.
		require.Equal(t, http.StatusConflict, do(http.MethodPost, "/v1/customers", custBasic("Outra", "outra@x.com", cpf)).status)
		require.Equal(t, http.StatusConflict, do(http.MethodPost, "/v1/customers", custBasic("Outra", "outra@x.com", custFormatCPF(cpf))).status)

		// A race on one new CPF, so that the database's unique index refuses
		// some of them.
		raced := e.custNewCPF()
		start := make(chan struct{})
		var wg sync.WaitGroup
		statuses := make([]int, 10)
		for i := range statuses {
			requests++
			wg.Go(func() {
				<-start
				body, _ := json.Marshal(custBasic("Corrida", fmt.Sprintf("corrida%d@x.com", i), []string{raced, custFormatCPF(raced)}[i%2]))
				req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/v1/customers", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+e.token)
				res, err := e.srv.Client().Do(req)
				if err != nil {
					return
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				statuses[i] = res.StatusCode
			})
		}
		close(start)
		wg.Wait()
		slices.Sort(statuses)
		require.Equal(t, []int{201, 409, 409, 409, 409, 409, 409, 409, 409, 409}, statuses)

		// Validation errors around a valid and an invalid CPF.
		invalid := cpf[:9] + string('0'+(cpf[9]-'0'+1)%10) + cpf[10:]
		e.custSecret(invalid)
		require.Equal(t, 422, do(http.MethodPost, "/v1/customers", custBasic("Ana", "not-an-email", cpf)).status)
		require.Equal(t, 422, do(http.MethodPost, "/v1/customers", custBasic("Ana", "ana2@x.com", invalid)).status)
		require.Equal(t, 422, do(http.MethodPost, "/v1/customers", custBasic("Ana", "ana2@x.com", custFormatCPF(invalid))).status)
		asNumber := strings.TrimLeft(cpf, "0") // a JSON number has no leading zero
		e.custSecret(asNumber)
		require.Equal(t, 422, do(http.MethodPost, "/v1/customers", map[string]any{"name": "Ana", "email": "ana2@x.com", "cpf": json.Number(asNumber)}).status)
		require.Equal(t, 400, do(http.MethodPost, "/v1/customers", `{"name":"Ana","cpf":"`+cpf+`"`).status)
		require.Equal(t, 422, do(http.MethodPatch, "/v1/customers/"+id, map[string]any{"cpf": invalid}).status)

		// Reads, searches by CPF and updates.
		require.Equal(t, 200, do(http.MethodGet, "/v1/customers/"+id, nil).status)
		for _, q := range []string{cpf, custFormatCPF(cpf), raced, invalid} {
			require.Equal(t, 200, do(http.MethodGet, "/v1/customers?search="+url.QueryEscape(q), nil).status)
		}
		require.Equal(t, 200, do(http.MethodGet, "/v1/customers?search="+url.QueryEscape(cpf)+"&limit=1", nil).status)
		require.Equal(t, 422, do(http.MethodGet, "/v1/customers?search="+url.QueryEscape(cpf)+"&limit=0", nil).status)
		require.Equal(t, 200, do(http.MethodPatch, "/v1/customers/"+id, map[string]any{"cpf": custFormatCPF(cpf)}).status)
		require.Equal(t, 200, do(http.MethodPut, "/v1/customers/"+id, custBasic("Ana", "ana@x.com", cpf)).status)
		require.Equal(t, 409, do(http.MethodPut, "/v1/customers/"+id, custBasic("Ana", "ana@x.com", raced)).status)

		// Close waits for every handler, so every log line is written.
		e.srv.Close()
		logs := e.logs.String()
		lines := strings.Split(strings.TrimSpace(logs), "\n")
		accessLines := 0
		for _, l := range lines {
			var rec map[string]any
			require.NoError(t, json.Unmarshal([]byte(l), &rec), "log line %q", l)
			if rec["msg"] == "request" && strings.HasPrefix(rec["path"].(string), "/v1/customers") {
				accessLines++
			}
		}
		require.Equal(t, requests, accessLines, "the logs were not captured:\n%s", logs)
		e.custRequireNoCPF(t, "the server log", logs)
		for _, d := range []string{cpf, raced, invalid} {
			require.NotContains(t, logs, d[:3]+"."+d[3:6]+"."+d[6:9])
		}
	})
}
