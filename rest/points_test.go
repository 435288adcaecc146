package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/schema/viewer"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// The tests of the points endpoints (credit, debit, balance, statement), on
// both path prefixes: a real server over a real database (SQLite, and
// PostgreSQL when FIDELIZA_TEST_DATABASE_URL is set) with tokens of the real
// token service and a controllable clock. Every helper is prefixed with pts:
// the package has other fixtures.

const (
	ptsScopeRead  = "loyalty:read"
	ptsScopeWrite = "loyalty:write"
)

// ptsPrefixes are the two path prefixes every points route is served under.
var ptsPrefixes = []string{"", "/v1"}

func ptsPrefixName(prefix string) string {
	if prefix == "" {
		return "no_prefix"
	}
	return strings.TrimPrefix(prefix, "/")
}

// ptsEnv is the test environment with a token of its tenant holding both
// loyalty scopes, and the application's clock.
type ptsEnv struct {
	*TestEnv
	token string // loyalty:read and loyalty:write

	mu    sync.Mutex
	now   time.Time // the clock of the app; zero: the system clock
	cpfNo int
}

func ptsSys() context.Context { return viewer.SystemContext(context.Background()) }

func ptsSetup(t *testing.T, db *storage.DB) *ptsEnv {
	t.Helper()
	e := &ptsEnv{TestEnv: newTestEnv(t, db)}
	e.app.Clock = e.clock
	e.token = e.tokenFor(t, ptsScopeRead, ptsScopeWrite)
	return e
}

func (e *ptsEnv) clock() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.now.IsZero() {
		return time.Now()
	}
	return e.now
}

// ptsSetClock sets the app's clock; the zero time restores the system clock.
func (e *ptsEnv) ptsSetClock(t time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.now = t
}

func (e *ptsEnv) ptsTenant(t *testing.T, name string) string {
	t.Helper()
	tn, err := e.app.Backoffice.CreateTenant(ptsSys(), name, nil)
	require.NoError(t, err)
	return tn.ID
}

// ptsToken makes an OAuth client of tenantID and returns an access token for
// exactly scopes.
func (e *ptsEnv) ptsToken(t *testing.T, tenantID string, scopes ...string) string {
	t.Helper()
	c, err := e.app.Backoffice.CreateClient(ptsSys(), tenantID, apiclient.KindOauth, "points test", nil)
	require.NoError(t, err)
	tok, err := e.app.Auth.IssueToken(context.Background(), auth.TokenRequest{
		GrantType: "client_credentials", ClientID: c.Client.ID, ClientSecret: c.Secret, Scope: strings.Join(scopes, " "),
	})
	require.NoError(t, err)
	require.Equal(t, strings.Join(scopes, " "), tok.Scope)
	return tok.AccessToken
}

// ptsCPF returns the n-th valid CPF of the tests.
func ptsCPF(n int) string {
	base := fmt.Sprintf("%09d", 123456000+n)
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

// ptsCustomer creates a customer of tenantID and returns its id.
func (e *ptsEnv) ptsCustomer(t *testing.T, tenantID, name string) string {
	t.Helper()
	e.mu.Lock()
	e.cpfNo++
	n := e.cpfNo
	e.mu.Unlock()
	c, err := e.app.Customers.CreateCustomer(viewer.TenantContext(context.Background(), tenantID), customers.CustomerInput{
		Name: opt.Of(name), Email: opt.Of(fmt.Sprintf("cliente%d@x.com", n)), CPF: opt.Of(ptsCPF(n)),
	})
	require.NoError(t, err)
	return c.ID
}

// ptsStored reads a customer's stored balance and the number of its ledger
// entries, whatever its tenant.
func (e *ptsEnv) ptsStored(t *testing.T, customerID string) (balance int64, entries int) {
	t.Helper()
	c, err := e.db.Ent.Customer.Get(ptsSys(), customerID)
	require.NoError(t, err)
	n, err := e.db.Ent.PointsEntry.Query().Where(pointsentry.CustomerID(customerID)).Count(ptsSys())
	require.NoError(t, err)
	return c.PointsBalance, n
}

func (e *ptsEnv) ptsRequireStored(t *testing.T, customerID string, balance int64, entries int) {
	t.Helper()
	b, n := e.ptsStored(t, customerID)
	require.Equal(t, balance, b, "stored balance")
	require.Equal(t, entries, n, "ledger entries")
}

type ptsResp struct {
	status int
	header http.Header
	body   []byte
}

// obj decodes the body as one JSON object, numbers as json.Number.
func (r ptsResp) obj(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&m), "body: %s", r.body)
	return m
}

// ptsRaw sends a request with a raw body and content type.
func (e *ptsEnv) ptsRaw(t *testing.T, method, path, token, contentType, body string) ptsResp {
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
	return ptsResp{status: res.StatusCode, header: res.Header, body: b}
}

// ptsDo sends body (nil: none; string: as is; else its JSON) as
// application/json.
func (e *ptsEnv) ptsDo(t *testing.T, method, path, token string, body any) ptsResp {
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
	return e.ptsRaw(t, method, path, token, ct, raw)
}

// ptsPost posts body to prefix+path and requires 201 without a replay.
func (e *ptsEnv) ptsPost(t *testing.T, prefix, path string, body any) map[string]any {
	t.Helper()
	r := e.ptsDo(t, http.MethodPost, prefix+path, e.token, body)
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	require.Equal(t, "application/json", r.header.Get("Content-Type"))
	require.Empty(t, r.header.Values("Idempotent-Replayed"), "a first call is not a replay")
	return r.obj(t)
}

func (e *ptsEnv) ptsCredit(t *testing.T, prefix string, body any) map[string]any {
	t.Helper()
	return e.ptsPost(t, prefix, "/points/credit", body)
}

func (e *ptsEnv) ptsDebit(t *testing.T, prefix string, body any) map[string]any {
	t.Helper()
	return e.ptsPost(t, prefix, "/points/debit", body)
}

// ptsBalance reads a balance and checks its exact set of keys.
func (e *ptsEnv) ptsBalance(t *testing.T, prefix, customerID string) map[string]any {
	t.Helper()
	r := e.ptsDo(t, http.MethodGet, prefix+"/points/balance/"+customerID, e.token, nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	require.Equal(t, "application/json", r.header.Get("Content-Type"))
	m := r.obj(t)
	require.Equal(t, ptsSorted("customer_id", "points_balance", "points_pending", "points_debt", "level", "next_level", "points_to_next_level",
		"points_earned_last_12_months", "lifetime_value", "expiring_soon"), ptsKeys(m), "%s", r.body)
	return m
}

func ptsKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func ptsSorted(s ...string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return s
}

// ptsN is an integer as a decoded JSON number.
func ptsN(n int64) json.Number { return json.Number(strconv.FormatInt(n, 10)) }

// ptsTime renders t as the interface does.
func ptsTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// ptsEntryID checks the shape of a ledger entry id and returns it.
func ptsEntryID(t *testing.T, v any) string {
	t.Helper()
	s, ok := v.(string)
	require.True(t, ok, "entry id %v is not a string", v)
	require.Regexp(t, `^ptx_[0-9a-z]{26}$`, s)
	return s
}

// ptsWith returns a copy of m with the pairs set (a nil value deletes).
func ptsWith(m map[string]any, kv ...any) map[string]any {
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

// ptsRequireError checks an error answer: its status, its code, its exact set
// of keys, its field and, for validation_error, the fields of details in
// order.
func ptsRequireError(t *testing.T, r ptsResp, status int, code, field string, details ...string) map[string]any {
	t.Helper()
	require.Equal(t, status, r.status, "%s", r.body)
	require.Equal(t, "application/json", r.header.Get("Content-Type"))
	require.Empty(t, r.header.Values("Idempotent-Replayed"))
	m := r.obj(t)
	require.Equal(t, code, m["error"], "%s", r.body)
	switch code {
	case "insufficient_scope", "invalid_token":
		require.Equal(t, ptsSorted("error", "error_description"), ptsKeys(m), "%s", r.body)
		require.NotEmpty(t, m["error_description"])
		return m
	case "validation_error":
		require.Equal(t, ptsSorted("error", "message", "field", "details"), ptsKeys(m), "%s", r.body)
		var got []string
		for _, d := range m["details"].([]any) {
			dm := d.(map[string]any)
			require.Equal(t, ptsSorted("field", "message"), ptsKeys(dm))
			require.NotEmpty(t, dm["message"])
			got = append(got, dm["field"].(string))
		}
		require.Equal(t, details, got, "%s", r.body)
	case "insufficient_points":
		require.Equal(t, ptsSorted("error", "message", "field"), ptsKeys(m), "%s", r.body)
	default:
		require.Equal(t, ptsSorted("error", "message"), ptsKeys(m), "%s", r.body)
	}
	require.NotEmpty(t, m["message"])
	if field == "" {
		require.NotContains(t, m, "field", "%s", r.body)
	} else {
		require.Equal(t, field, m["field"], "%s", r.body)
	}
	return m
}

// ptsRequireValidation checks a 422 validation_error whose field is the
// first of details.
func ptsRequireValidation(t *testing.T, r ptsResp, details ...string) map[string]any {
	t.Helper()
	return ptsRequireError(t, r, http.StatusUnprocessableEntity, "validation_error", details[0], details...)
}

// ptsDetail returns the message of the detail of field.
func ptsDetail(t *testing.T, m map[string]any, field string) string {
	t.Helper()
	for _, d := range m["details"].([]any) {
		dm := d.(map[string]any)
		if dm["field"] == field {
			return dm["message"].(string)
		}
	}
	t.Fatalf("no detail for %s in %v", field, m)
	return ""
}

// ptsT0 is the clock of the tests that control time: a whole second, so
// timestamps render without a fraction.
var ptsT0 = time.Date(2026, 3, 10, 15, 4, 5, 0, time.UTC)

// ptsZone is the test tenant's time zone, the default.
var ptsZone = func() *time.Location {
	loc, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		panic(err)
	}
	return loc
}()

// ptsExpiry is when points credited at t expire under the default settings:
// the midnight in São Paulo that ends t's day, a year later.
func ptsExpiry(t time.Time) time.Time {
	l := t.In(ptsZone)
	return time.Date(l.Year()+1, l.Month(), l.Day()+1, 0, 0, 0, 0, ptsZone).UTC()
}

func TestPointsCredit(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := ptsSetup(t, db)
		for _, prefix := range ptsPrefixes {
			t.Run(ptsPrefixName(prefix), func(t *testing.T) {
				e.ptsSetClock(ptsT0)
				defer e.ptsSetClock(time.Time{})
				cust := e.ptsCustomer(t, e.tenantID, "Ana Lima")
				path := prefix + "/points/credit"

				// An amount earns points at the default rate of 1 per whole R$ 1.
				first := e.ptsCredit(t, prefix, map[string]any{"customer_id": cust, "order_id": "ped-1", "amount": 10.99})
				id1 := ptsEntryID(t, first["entry_id"])
				want1 := map[string]any{
					"entry_id": id1, "customer_id": cust, "order_id": "ped-1",
					"points_credited": ptsN(10), "new_balance": ptsN(10),
					"expires_at": "2027-03-11T03:00:00Z", "created_at": "2026-03-10T15:04:05Z", // the midnight ending the day, in São Paulo
				}
				require.Equal(t, want1, first)
				e.ptsRequireStored(t, cust, 10, 1)

				// A repeated credit of the order, later and even with another
				// amount, answers the first result and credits nothing more.
				e.ptsSetClock(ptsT0.Add(time.Hour))
				for _, body := range []map[string]any{
					{"customer_id": cust, "order_id": "ped-1", "amount": 10.99},
					{"customer_id": cust, "order_id": "ped-1", "amount": 500},
					{"customer_id": cust, "order_id": "ped-1", "points": 70},
				} {
					r := e.ptsDo(t, http.MethodPost, path, e.token, body)
					require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
					require.Equal(t, "application/json", r.header.Get("Content-Type"))
					require.Equal(t, []string{"true"}, r.header.Values("Idempotent-Replayed"))
					require.Equal(t, want1, r.obj(t))
					e.ptsRequireStored(t, cust, 10, 1)
				}

				// points wins over amount; the amount still counts as spent.
				second := e.ptsCredit(t, prefix, map[string]any{"customer_id": cust, "order_id": "ped-2", "amount": 100, "points": 7})
				require.Equal(t, map[string]any{
					"entry_id": ptsEntryID(t, second["entry_id"]), "customer_id": cust, "order_id": "ped-2",
					"points_credited": ptsN(7), "new_balance": ptsN(17),
					"expires_at": "2027-03-11T03:00:00Z", "created_at": "2026-03-10T16:04:05Z",
				}, second)
				require.NotEqual(t, id1, second["entry_id"])

				// points alone; an amount of exactly R$ 1 earns 1 point.
				e.ptsSetClock(ptsT0.Add(2*time.Hour + 250*time.Millisecond))
				third := e.ptsCredit(t, prefix, map[string]any{"customer_id": cust, "order_id": "ped-3", "points": 1000000000})
				require.Equal(t, map[string]any{
					"entry_id": ptsEntryID(t, third["entry_id"]), "customer_id": cust, "order_id": "ped-3",
					"points_credited": ptsN(1000000000), "new_balance": ptsN(1000000017),
					"expires_at": "2027-03-11T03:00:00Z", "created_at": "2026-03-10T17:04:05.25Z",
				}, third)
				fourth := e.ptsCredit(t, prefix, map[string]any{"customer_id": cust, "order_id": "ped-4", "amount": json.RawMessage("1.00")})
				require.Equal(t, ptsN(1), fourth["points_credited"])
				require.Equal(t, ptsN(1000000018), fourth["new_balance"])
				e.ptsRequireStored(t, cust, 1000000018, 4)

				// The replay of the first order still answers its own result,
				// not the balance of today.
				r := e.ptsDo(t, http.MethodPost, path, e.token, map[string]any{"customer_id": cust, "order_id": "ped-1", "amount": 10.99})
				require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
				require.Equal(t, "true", r.header.Get("Idempotent-Replayed"))
				require.Equal(t, want1, r.obj(t))

				// The same order of another customer is another credit.
				other := e.ptsCustomer(t, e.tenantID, "Bia Souza")
				o := e.ptsCredit(t, prefix, map[string]any{"customer_id": other, "order_id": "ped-1", "amount": 10.99})
				require.Equal(t, ptsN(10), o["new_balance"])
				e.ptsRequireStored(t, other, 10, 1)

				b := e.ptsBalance(t, prefix, cust)
				require.Equal(t, ptsN(1000000018), b["points_balance"])
				require.Equal(t, json.Number("111.99"), b["lifetime_value"], "10.99 + 100 + 1.00; replays add nothing")
				e.ptsRequireStored(t, cust, 1000000018, 4)
			})
		}
	})
}

func TestPointsEarningRate(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := ptsSetup(t, db)
		double := e.ptsTenant(t, "Loja Dobro")
		two := decimal.NewFromInt(2)
		_, err := e.app.Backoffice.UpdateTenant(ptsSys(), double, backoffice.TenantSettings{PointsPerReal: &two})
		require.NoError(t, err)
		doubleToken := e.ptsToken(t, double, ptsScopeRead, ptsScopeWrite)

		const none, tooMany = "earns no points", "earns more than 1000000000 points"
		cases := []struct {
			name    string
			double  bool
			amount  any
			points  int64
			refused string // the message of the 422 on amount, when refused
		}{
			{"10.99 at the default rate", false, 10.99, 10, ""},
			{"10.99 at 2 per real", true, 10.99, 21, ""},
			{"1.00 at the default rate", false, "1.00", 1, ""},
			{"0.99 at the default rate", false, 0.99, 0, none},
			{"0.01 at the default rate", false, 0.01, 0, none},
			{"0 at the default rate", false, 0, 0, none},
			{"0.50 at 2 per real", true, 0.5, 1, ""},
			{"0.49 at 2 per real", true, 0.49, 0, none},
			{"1234.56 at 2 per real", true, 1234.56, 2469, ""},
			{"the largest amount at the default rate", false, "1000000000.00", 1000000000, ""},
			{"500000000.00 at 2 per real", true, "500000000.00", 1000000000, ""},
			{"500000000.50 at 2 per real", true, "500000000.50", 0, tooMany},
		}
		for _, prefix := range ptsPrefixes {
			for i, tc := range cases {
				t.Run(ptsPrefixName(prefix)+"/"+tc.name, func(t *testing.T) {
					tenant, token := e.tenantID, e.token
					if tc.double {
						tenant, token = double, doubleToken
					}
					cust := e.ptsCustomer(t, tenant, "Cliente")
					amount := tc.amount
					if s, ok := amount.(string); ok {
						amount = json.RawMessage(s)
					}
					body := map[string]any{"customer_id": cust, "order_id": fmt.Sprintf("ped-%d", i), "amount": amount}
					r := e.ptsDo(t, http.MethodPost, prefix+"/points/credit", token, body)
					if tc.refused != "" {
						m := ptsRequireValidation(t, r, "amount")
						require.Contains(t, ptsDetail(t, m, "amount"), tc.refused)
						e.ptsRequireStored(t, cust, 0, 0)
						return
					}
					require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
					m := r.obj(t)
					require.Equal(t, ptsN(tc.points), m["points_credited"])
					require.Equal(t, ptsN(tc.points), m["new_balance"])
					e.ptsRequireStored(t, cust, tc.points, 1)
				})
			}
		}
	})
}

func TestPointsCreditValidation(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := ptsSetup(t, db)
		cust := e.ptsCustomer(t, e.tenantID, "Ana Lima")
		valid := map[string]any{"customer_id": cust, "order_id": "ped-1", "amount": 10.99}
		raw := func(s string) json.RawMessage { return json.RawMessage(s) }

		cases := []struct {
			name    string
			body    any
			details []string
		}{
			{"missing customer_id", ptsWith(valid, "customer_id", nil), []string{"customer_id"}},
			{"empty customer_id", ptsWith(valid, "customer_id", ""), []string{"customer_id"}},
			{"blank customer_id", ptsWith(valid, "customer_id", "   "), []string{"customer_id"}},
			{"null customer_id", ptsWith(valid, "customer_id", raw("null")), []string{"customer_id"}},
			{"missing order_id", ptsWith(valid, "order_id", nil), []string{"order_id"}},
			{"empty order_id", ptsWith(valid, "order_id", ""), []string{"order_id"}},
			{"order_id too long", ptsWith(valid, "order_id", strings.Repeat("x", 129)), []string{"order_id"}},
			{"neither amount nor points, no redemption", ptsWith(valid, "amount", nil), []string{"amount"}},
			{"null amount and points, no redemption", ptsWith(valid, "amount", raw("null"), "points", raw("null")), []string{"amount"}},
			{"empty object", map[string]any{}, []string{"customer_id", "order_id"}},
			{"negative amount", ptsWith(valid, "amount", -10), []string{"amount"}},
			{"negative amount with points", ptsWith(valid, "amount", -10, "points", 5), []string{"amount"}},
			{"amount with 3 decimals", ptsWith(valid, "amount", raw("10.999")), []string{"amount"}},
			{"amount with 3 decimals, small", ptsWith(valid, "amount", raw("1.001")), []string{"amount"}},
			{"amount below R$ 1", ptsWith(valid, "amount", 0.99), []string{"amount"}},
			{"amount zero", ptsWith(valid, "amount", 0), []string{"amount"}},
			{"amount too large", ptsWith(valid, "amount", raw("10000000000")), []string{"amount"}},
			{"amount of 1e400", ptsWith(valid, "amount", raw("1e400")), []string{"amount"}},
			{"points zero", ptsWith(valid, "points", 0), []string{"points"}},
			{"points negative", ptsWith(valid, "points", -5), []string{"points"}},
			{"points fractional", ptsWith(valid, "points", 1.5), []string{"points"}},
			{"points too large", ptsWith(valid, "points", 1000000001), []string{"points"}},
			{"points far too large", ptsWith(valid, "points", raw("1e20")), []string{"points"}},
			{"both amount and points wrong", ptsWith(valid, "amount", -1, "points", 0), []string{"amount", "points"}},
			{"customer_id is a number", ptsWith(valid, "customer_id", 42), []string{"customer_id"}},
			{"customer_id is an object", ptsWith(valid, "customer_id", map[string]any{"id": cust}), []string{"customer_id"}},
			{"order_id is a boolean", ptsWith(valid, "order_id", true), []string{"order_id"}},
			{"order_id is a number", ptsWith(valid, "order_id", 1234), []string{"order_id"}},
			{"amount is a numeric string", ptsWith(valid, "amount", "10.99"), []string{"amount"}},
			{"amount is a string", ptsWith(valid, "amount", "dez"), []string{"amount"}},
			{"amount is a boolean", ptsWith(valid, "amount", true), []string{"amount"}},
			{"amount is an object", ptsWith(valid, "amount", map[string]any{"value": 10}), []string{"amount"}},
			{"points is a numeric string", ptsWith(valid, "points", "7"), []string{"points"}},
			{"points is an array", ptsWith(valid, "points", []int{7}), []string{"points"}},
			{"points is a boolean", ptsWith(valid, "points", false), []string{"points"}},
		}
		badJSON := []struct{ name, body, message string }{
			{"malformed", `{"customer_id": "` + cust + `", `, ""},
			{"not JSON", `customer_id=` + cust, ""},
			{"empty body", ``, "the body is empty"},
			{"trailing garbage", `{"customer_id":"` + cust + `","order_id":"ped-1","amount":10} x`, ""},
			{"two objects", `{"customer_id":"` + cust + `","order_id":"ped-1","amount":10}{}`, ""},
			{"array", `[{"customer_id":"` + cust + `"}]`, ""},
			{"string", `"ped-1"`, ""},
		}
		validJSON, err := json.Marshal(valid)
		require.NoError(t, err)

		for _, prefix := range ptsPrefixes {
			path := prefix + "/points/credit"
			t.Run(ptsPrefixName(prefix), func(t *testing.T) {
				for _, tc := range cases {
					t.Run("422 "+tc.name, func(t *testing.T) {
						r := e.ptsDo(t, http.MethodPost, path, e.token, tc.body)
						ptsRequireValidation(t, r, tc.details...)
					})
				}
				for _, tc := range badJSON {
					t.Run("400 "+tc.name, func(t *testing.T) {
						r := e.ptsRaw(t, http.MethodPost, path, e.token, "application/json", tc.body)
						m := ptsRequireError(t, r, http.StatusBadRequest, "invalid_json", "")
						if tc.message != "" {
							require.Equal(t, tc.message, m["message"])
						}
					})
				}
				for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "application/xml", "not a media type/"} {
					t.Run("415 "+ct, func(t *testing.T) {
						r := e.ptsRaw(t, http.MethodPost, path, e.token, ct, string(validJSON))
						ptsRequireError(t, r, http.StatusUnsupportedMediaType, "unsupported_media_type", "")
					})
				}
			})
		}
		// The messages of wrong types name the type expected.
		r := e.ptsDo(t, http.MethodPost, "/points/credit", e.token, ptsWith(valid, "amount", "10.99"))
		require.Equal(t, "must be a number", ptsDetail(t, ptsRequireValidation(t, r, "amount"), "amount"))
		r = e.ptsDo(t, http.MethodPost, "/points/credit", e.token, ptsWith(valid, "points", true))
		require.Equal(t, "must be a number", ptsDetail(t, ptsRequireValidation(t, r, "points"), "points"))
		r = e.ptsDo(t, http.MethodPost, "/points/credit", e.token, ptsWith(valid, "order_id", 1))
		require.Equal(t, "must be a string", ptsDetail(t, ptsRequireValidation(t, r, "order_id"), "order_id"))

		e.ptsRequireStored(t, cust, 0, 0)

		// An amount given as 10.990 has two decimal places.
		m := e.ptsCredit(t, "", ptsWith(valid, "amount", raw("10.990")))
		require.Equal(t, ptsN(10), m["points_credited"])
		e.ptsRequireStored(t, cust, 10, 1)
	})
}

func TestPointsNotFound(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := ptsSetup(t, db)
		otherTenant := e.ptsTenant(t, "Outra Loja")
		foreign := e.ptsCustomer(t, otherTenant, "Cliente de Outra Loja")
		// The foreign customer has points its tenant gave it.
		otherToken := e.ptsToken(t, otherTenant, ptsScopeRead, ptsScopeWrite)
		r := e.ptsDo(t, http.MethodPost, "/points/credit", otherToken, map[string]any{"customer_id": foreign, "order_id": "ped-1", "points": 500})
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		mine := e.ptsCustomer(t, e.tenantID, "Cliente Daqui")
		e.ptsCredit(t, "", map[string]any{"customer_id": mine, "order_id": "ped-1", "points": 500})

		ids := map[string]string{
			"unknown customer":           "cus_01jd0000000000000000000000",
			"another tenant's customer":  foreign,
			"id of another kind":         e.tenantID,
			"id with a path-like suffix": "cus_x%2F..",
		}
		for _, prefix := range ptsPrefixes {
			for what, id := range ids {
				t.Run(ptsPrefixName(prefix)+"/"+what, func(t *testing.T) {
					r := e.ptsDo(t, http.MethodPost, prefix+"/points/credit", e.token, map[string]any{"customer_id": id, "order_id": "ped-9", "points": 10})
					m := ptsRequireError(t, r, http.StatusNotFound, "not_found", "")
					require.Equal(t, "customer not found", m["message"])
					r = e.ptsDo(t, http.MethodPost, prefix+"/points/credit", e.token, map[string]any{"customer_id": id, "order_id": "ped-9", "amount": 10})
					ptsRequireError(t, r, http.StatusNotFound, "not_found", "")
					r = e.ptsDo(t, http.MethodPost, prefix+"/points/debit", e.token, map[string]any{"customer_id": id, "points": 10})
					ptsRequireError(t, r, http.StatusNotFound, "not_found", "")
					r = e.ptsDo(t, http.MethodPost, prefix+"/points/debit", e.token, map[string]any{"customer_id": id, "points": 10, "order_id": "ped-1"})
					ptsRequireError(t, r, http.StatusNotFound, "not_found", "")
					r = e.ptsDo(t, http.MethodGet, prefix+"/points/balance/"+id, e.token, nil)
					ptsRequireError(t, r, http.StatusNotFound, "not_found", "")
					r = e.ptsDo(t, http.MethodGet, prefix+"/points/statement/"+id, e.token, nil)
					ptsRequireError(t, r, http.StatusNotFound, "not_found", "")
					r = e.ptsDo(t, http.MethodGet, prefix+"/points/statement/"+id+"?limit=5&from=2026-01-01", e.token, nil)
					ptsRequireError(t, r, http.StatusNotFound, "not_found", "")
				})
			}
		}
		// Nothing moved on either side.
		e.ptsRequireStored(t, foreign, 500, 1)
		e.ptsRequireStored(t, mine, 500, 1)
	})
}

func TestPointsDebit(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := ptsSetup(t, db)
		for _, prefix := range ptsPrefixes {
			t.Run(ptsPrefixName(prefix), func(t *testing.T) {
				defer e.ptsSetClock(time.Time{})
				cust := e.ptsCustomer(t, e.tenantID, "Ana Lima")
				path := prefix + "/points/debit"
				e.ptsSetClock(ptsT0)
				e.ptsCredit(t, prefix, map[string]any{"customer_id": cust, "order_id": "ped-1", "points": 100})
				e.ptsSetClock(ptsT0.Add(24 * time.Hour))
				e.ptsCredit(t, prefix, map[string]any{"customer_id": cust, "order_id": "ped-2", "amount": 50.5})

				e.ptsSetClock(ptsT0.Add(48*time.Hour + 123456*time.Microsecond))
				first := e.ptsDebit(t, prefix, map[string]any{"customer_id": cust, "points": 30, "order_id": "troca-1", "reason": "troca por brinde"})
				want := map[string]any{
					"entry_id": ptsEntryID(t, first["entry_id"]), "customer_id": cust, "order_id": "troca-1",
					"points_debited": ptsN(30), "new_balance": ptsN(120), "created_at": "2026-03-12T15:04:05.123456Z",
				}
				require.Equal(t, want, first)
				e.ptsRequireStored(t, cust, 120, 3)

				// A repeated debit of the order answers the first result, even
				// with other points, and takes nothing more.
				e.ptsSetClock(ptsT0.Add(72 * time.Hour))
				for _, body := range []map[string]any{
					{"customer_id": cust, "points": 30, "order_id": "troca-1", "reason": "troca por brinde"},
					{"customer_id": cust, "points": 999999, "order_id": "troca-1"},
					{"customer_id": cust, "points": 1, "order_id": "troca-1", "reason": "outro motivo"},
				} {
					r := e.ptsDo(t, http.MethodPost, path, e.token, body)
					require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
					require.Equal(t, "application/json", r.header.Get("Content-Type"))
					require.Equal(t, []string{"true"}, r.header.Values("Idempotent-Replayed"))
					require.Equal(t, want, r.obj(t))
					e.ptsRequireStored(t, cust, 120, 3)
				}

				// Without an order id every call debits, and order_id is null.
				for i, wantBalance := range []int64{110, 100} {
					m := e.ptsDebit(t, prefix, map[string]any{"customer_id": cust, "points": 10})
					require.Equal(t, map[string]any{
						"entry_id": ptsEntryID(t, m["entry_id"]), "customer_id": cust, "order_id": nil,
						"points_debited": ptsN(10), "new_balance": ptsN(wantBalance), "created_at": "2026-03-13T15:04:05Z",
					}, m, "debit %d", i)
				}
				e.ptsRequireStored(t, cust, 100, 5)

				// More than the balance: 422 insufficient_points, nothing taken.
				for _, body := range []map[string]any{
					{"customer_id": cust, "points": 101},
					{"customer_id": cust, "points": 101, "order_id": "troca-2"},
					{"customer_id": cust, "points": 1000000000, "order_id": "troca-2"},
				} {
					r := e.ptsDo(t, http.MethodPost, path, e.token, body)
					m := ptsRequireError(t, r, http.StatusUnprocessableEntity, "insufficient_points", "points")
					require.Equal(t, "the customer's balance is lower than the points asked", m["message"])
					e.ptsRequireStored(t, cust, 100, 5)
				}
				require.Equal(t, ptsN(100), e.ptsBalance(t, prefix, cust)["points_balance"])

				// The refused order may be debited once the points suffice;
				// the whole balance may be spent, and no more.
				m := e.ptsDebit(t, prefix, map[string]any{"customer_id": cust, "points": 100, "order_id": "troca-2"})
				require.Equal(t, ptsN(100), m["points_debited"])
				require.Equal(t, ptsN(0), m["new_balance"])
				r := e.ptsDo(t, http.MethodPost, path, e.token, map[string]any{"customer_id": cust, "points": 1})
				ptsRequireError(t, r, http.StatusUnprocessableEntity, "insufficient_points", "points")
				e.ptsRequireStored(t, cust, 0, 6)
				require.Equal(t, ptsN(0), e.ptsBalance(t, prefix, cust)["points_balance"])

				// A credit and a debit of the same order id are different movements.
				c := e.ptsCredit(t, prefix, map[string]any{"customer_id": cust, "order_id": "troca-1", "points": 5})
				require.Equal(t, ptsN(5), c["new_balance"])
				e.ptsRequireStored(t, cust, 5, 7)
			})
		}
	})
}

// Points past their expiry cannot be spent even before the expiry job has
// taken them from the balance.
func TestPointsDebitExpiredLots(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := ptsSetup(t, db)
		for _, prefix := range ptsPrefixes {
			t.Run(ptsPrefixName(prefix), func(t *testing.T) {
				defer e.ptsSetClock(time.Time{})
				cust := e.ptsCustomer(t, e.tenantID, "Ana Lima")
				e.ptsSetClock(ptsT0)
				e.ptsCredit(t, prefix, map[string]any{"customer_id": cust, "order_id": "ped-1", "points": 100})
				e.ptsSetClock(ptsT0.AddDate(0, 6, 0))
				e.ptsCredit(t, prefix, map[string]any{"customer_id": cust, "order_id": "ped-2", "points": 40})

				e.ptsSetClock(ptsExpiry(ptsT0)) // the first lot expires now
				r := e.ptsDo(t, http.MethodPost, prefix+"/points/debit", e.token, map[string]any{"customer_id": cust, "points": 41})
				ptsRequireError(t, r, http.StatusUnprocessableEntity, "insufficient_points", "points")
				e.ptsRequireStored(t, cust, 140, 2)
				m := e.ptsDebit(t, prefix, map[string]any{"customer_id": cust, "points": 40})
				require.Equal(t, ptsN(100), m["new_balance"])
			})
		}
	})
}

func TestPointsDebitValidation(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := ptsSetup(t, db)
		cust := e.ptsCustomer(t, e.tenantID, "Ana Lima")
		e.ptsCredit(t, "", map[string]any{"customer_id": cust, "order_id": "ped-1", "points": 100})
		valid := map[string]any{"customer_id": cust, "points": 10, "order_id": "troca-1", "reason": "brinde"}
		raw := func(s string) json.RawMessage { return json.RawMessage(s) }

		cases := []struct {
			name    string
			body    any
			details []string
		}{
			{"missing customer_id", ptsWith(valid, "customer_id", nil), []string{"customer_id"}},
			{"blank customer_id", ptsWith(valid, "customer_id", " "), []string{"customer_id"}},
			{"missing points", ptsWith(valid, "points", nil), []string{"points"}},
			{"null points", ptsWith(valid, "points", raw("null")), []string{"points"}},
			{"empty object", map[string]any{}, []string{"points"}},
			{"points zero", ptsWith(valid, "points", 0), []string{"points"}},
			{"points negative", ptsWith(valid, "points", -10), []string{"points"}},
			{"points fractional", ptsWith(valid, "points", 2.5), []string{"points"}},
			{"points too large", ptsWith(valid, "points", 1000000001), []string{"points"}},
			{"points far too large", ptsWith(valid, "points", raw("9007199254740993")), []string{"points"}},
			{"empty order_id", ptsWith(valid, "order_id", ""), []string{"order_id"}},
			{"order_id too long", ptsWith(valid, "order_id", strings.Repeat("x", 129)), []string{"order_id"}},
			{"reason too long", ptsWith(valid, "reason", strings.Repeat("x", 501)), []string{"reason"}},
			{"several problems", ptsWith(valid, "customer_id", "", "order_id", "", "reason", strings.Repeat("x", 501)), []string{"customer_id", "order_id", "reason"}},
			{"customer_id is a number", ptsWith(valid, "customer_id", 7), []string{"customer_id"}},
			{"points is a numeric string", ptsWith(valid, "points", "10"), []string{"points"}},
			{"points is a string", ptsWith(valid, "points", "dez"), []string{"points"}},
			{"points is a boolean", ptsWith(valid, "points", true), []string{"points"}},
			{"points is an object", ptsWith(valid, "points", map[string]any{}), []string{"points"}},
			{"order_id is a number", ptsWith(valid, "order_id", 12), []string{"order_id"}},
			{"reason is an array", ptsWith(valid, "reason", []string{"a"}), []string{"reason"}},
		}
		for _, prefix := range ptsPrefixes {
			path := prefix + "/points/debit"
			t.Run(ptsPrefixName(prefix), func(t *testing.T) {
				for _, tc := range cases {
					t.Run("422 "+tc.name, func(t *testing.T) {
						r := e.ptsDo(t, http.MethodPost, path, e.token, tc.body)
						ptsRequireValidation(t, r, tc.details...)
					})
				}
				for name, body := range map[string]string{
					"malformed": `{"customer_id":`, "empty body": ``, "array": `[]`,
					"trailing garbage": `{"customer_id":"` + cust + `","points":1}]`,
				} {
					t.Run("400 "+name, func(t *testing.T) {
						r := e.ptsRaw(t, http.MethodPost, path, e.token, "application/json", body)
						ptsRequireError(t, r, http.StatusBadRequest, "invalid_json", "")
					})
				}
				t.Run("415", func(t *testing.T) {
					r := e.ptsRaw(t, http.MethodPost, path, e.token, "text/plain", `{"customer_id":"`+cust+`","points":1}`)
					ptsRequireError(t, r, http.StatusUnsupportedMediaType, "unsupported_media_type", "")
				})
			})
		}
		r := e.ptsDo(t, http.MethodPost, "/points/debit", e.token, ptsWith(valid, "points", nil))
		require.Equal(t, "is required", ptsDetail(t, ptsRequireValidation(t, r, "points"), "points"))
		r = e.ptsDo(t, http.MethodPost, "/points/debit", e.token, ptsWith(valid, "points", "10"))
		require.Equal(t, "must be a number", ptsDetail(t, ptsRequireValidation(t, r, "points"), "points"))
		e.ptsRequireStored(t, cust, 100, 1)
	})
}

func TestPointsBalance(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := ptsSetup(t, db)
		t0 := time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)
		for _, prefix := range ptsPrefixes {
			t.Run(ptsPrefixName(prefix), func(t *testing.T) {
				defer e.ptsSetClock(time.Time{})
				cust := e.ptsCustomer(t, e.tenantID, "Ana Lima")
				balance := func() map[string]any { return e.ptsBalance(t, prefix, cust) }
				type lot struct {
					points    int64
					expiresAt string
				}
				want := func(pts int64, level string, next any, missing any, earned int64, ltv string, lots ...lot) map[string]any {
					var expiring int64
					items := []any{}
					for _, l := range lots {
						expiring += l.points
						items = append(items, map[string]any{"points": ptsN(l.points), "expires_at": l.expiresAt})
					}
					if m, ok := missing.(int64); ok {
						missing = ptsN(m)
					}
					return map[string]any{
						"customer_id": cust, "points_balance": ptsN(pts), "points_pending": ptsN(0), "points_debt": ptsN(0), "level": level,
						"next_level": next, "points_to_next_level": missing,
						"points_earned_last_12_months": ptsN(earned), "lifetime_value": json.Number(ltv),
						"expiring_soon": map[string]any{"points": ptsN(expiring), "days": ptsN(30), "lots": items},
					}
				}

				e.ptsSetClock(t0)
				require.Equal(t, want(0, "bronze", "silver", int64(1000), 0, "0"), balance())
				r := e.ptsDo(t, http.MethodGet, prefix+"/points/balance/"+cust, e.token, nil)
				require.Contains(t, string(r.body), `"lifetime_value":0,`, "lifetime_value is a JSON number")
				require.Contains(t, string(r.body), `"next_level":"silver"`)

				// Lot A: 999 points of R$ 999.50 at t0, expiring a year later.
				e.ptsCredit(t, prefix, map[string]any{"customer_id": cust, "order_id": "ped-a", "amount": 999.5})
				require.Equal(t, want(999, "bronze", "silver", int64(1), 999, "999.5"), balance())

				// Lot B, 20 days later: silver at 1,000 earned.
				e.ptsSetClock(t0.AddDate(0, 0, 20))
				e.ptsCredit(t, prefix, map[string]any{"customer_id": cust, "order_id": "ped-b", "points": 1, "amount": 10.25})
				require.Equal(t, want(1000, "silver", "gold", int64(4000), 1000, "1009.75"), balance())
				r = e.ptsDo(t, http.MethodGet, prefix+"/points/balance/"+cust, e.token, nil)
				require.Contains(t, string(r.body), `"lifetime_value":1009.75,`)

				// Lot C: gold at 5,000.
				e.ptsSetClock(t0.AddDate(0, 2, 0))
				e.ptsCredit(t, prefix, map[string]any{"customer_id": cust, "order_id": "ped-c", "points": 4000})
				require.Equal(t, want(5000, "gold", "diamond", int64(15000), 5000, "1009.75"), balance())

				// Lot D: diamond at 20,000, the top: no next level.
				e.ptsCredit(t, prefix, map[string]any{"customer_id": cust, "order_id": "ped-d", "points": 15000})
				require.Equal(t, want(20000, "diamond", nil, nil, 20000, "1009.75"), balance())
				r = e.ptsDo(t, http.MethodGet, prefix+"/points/balance/"+cust, e.token, nil)
				require.Contains(t, string(r.body), `"next_level":null`)
				require.Contains(t, string(r.body), `"points_to_next_level":null`)

				// A debit spends the oldest lot first and does not lower the
				// points earned.
				e.ptsDebit(t, prefix, map[string]any{"customer_id": cust, "points": 500})
				require.Equal(t, want(19500, "diamond", nil, nil, 20000, "1009.75"), balance())

				// Lots expire at the midnight ending their day, in São Paulo.
				expiresA := ptsExpiry(t0)
				lotA := lot{499, "2027-01-11T03:00:00Z"}
				lotB := lot{1, "2027-01-31T03:00:00Z"}
				// Lot A expires in exactly 30 days: it is expiring soon.
				e.ptsSetClock(expiresA.AddDate(0, 0, -30))
				require.Equal(t, want(19500, "diamond", nil, nil, 20000, "1009.75", lotA), balance())
				// A second earlier, 30 days and a second before it: not yet.
				e.ptsSetClock(expiresA.AddDate(0, 0, -30).Add(-time.Second))
				require.Equal(t, want(19500, "diamond", nil, nil, 20000, "1009.75"), balance())
				// Five days before lot A: A and B, soonest first; C and D
				// (March) are not.
				e.ptsSetClock(expiresA.AddDate(0, 0, -5))
				require.Equal(t, want(19500, "diamond", nil, nil, 20000, "1009.75", lotA, lotB), balance())
				// A further debit takes what is left of A, then B.
				e.ptsDebit(t, prefix, map[string]any{"customer_id": cust, "points": 499})
				require.Equal(t, want(19001, "diamond", nil, nil, 20000, "1009.75", lotB), balance())
				e.ptsDebit(t, prefix, map[string]any{"customer_id": cust, "points": 1})
				require.Equal(t, want(19000, "diamond", nil, nil, 20000, "1009.75"), balance())
			})
		}
	})
}

// The points earned count the trailing 12 months. The level shown is the
// stored one, which only the periodic level job lowers; next_level and
// points_to_next_level follow the points earned, as worker/points_test.go
// also pins. Until the job runs, next_level may therefore equal level.
func TestPointsBalanceEarningWindow(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := ptsSetup(t, db)
		t0 := time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)
		for _, prefix := range ptsPrefixes {
			t.Run(ptsPrefixName(prefix), func(t *testing.T) {
				defer e.ptsSetClock(time.Time{})
				cust := e.ptsCustomer(t, e.tenantID, "Ana Lima")
				e.ptsSetClock(t0)
				e.ptsCredit(t, prefix, map[string]any{"customer_id": cust, "order_id": "ped-a", "points": 999})
				e.ptsDebit(t, prefix, map[string]any{"customer_id": cust, "points": 999}) // lot A is spent
				e.ptsSetClock(t0.AddDate(0, 0, 20))
				e.ptsCredit(t, prefix, map[string]any{"customer_id": cust, "order_id": "ped-b", "points": 1})

				e.ptsSetClock(t0.AddDate(1, 0, 0)) // A's credit is exactly 12 months old: it counts
				b := e.ptsBalance(t, prefix, cust)
				require.Equal(t, "silver", b["level"])
				require.Equal(t, ptsN(1000), b["points_earned_last_12_months"])
				require.Equal(t, "gold", b["next_level"])
				require.Equal(t, ptsN(4000), b["points_to_next_level"])

				// The window starts at a midnight of the tenant's time zone
				// (America/Sao_Paulo, UTC-3): A's day leaves it at the next one.
				e.ptsSetClock(time.Date(2027, 1, 11, 2, 59, 59, 0, time.UTC))
				require.Equal(t, ptsN(1000), e.ptsBalance(t, prefix, cust)["points_earned_last_12_months"], "A's day is still in the window")
				e.ptsSetClock(time.Date(2027, 1, 11, 3, 0, 0, 0, time.UTC)) // now it is not
				b = e.ptsBalance(t, prefix, cust)
				require.Equal(t, map[string]any{
					"customer_id": cust, "points_balance": ptsN(1), "points_pending": ptsN(0), "points_debt": ptsN(0), "level": "silver",
					"next_level": "silver", "points_to_next_level": ptsN(999),
					"points_earned_last_12_months": ptsN(1), "lifetime_value": json.Number("0"),
					"expiring_soon": map[string]any{"points": ptsN(1), "days": ptsN(30), "lots": []any{
						map[string]any{"points": ptsN(1), "expires_at": "2027-01-31T03:00:00Z"}, // the local midnight ending the day
					}},
				}, b)
			})
		}
	})
}

// ptsPage is a decoded statement page.
type ptsPage struct {
	items      []map[string]any
	nextCursor any
	hasMore    bool
	total      int64
}

func (e *ptsEnv) ptsStatement(t *testing.T, prefix, customerID string, q url.Values) ptsPage {
	t.Helper()
	path := prefix + "/points/statement/" + customerID
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	r := e.ptsDo(t, http.MethodGet, path, e.token, nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	require.Equal(t, "application/json", r.header.Get("Content-Type"))
	m := r.obj(t)
	require.Equal(t, []string{"customer_id", "data", "pagination"}, ptsKeys(m))
	require.Equal(t, customerID, m["customer_id"])
	data, ok := m["data"].([]any)
	require.True(t, ok, "data is not an array: %s", r.body)
	var p ptsPage
	for _, d := range data {
		p.items = append(p.items, d.(map[string]any))
	}
	pg := m["pagination"].(map[string]any)
	require.Equal(t, []string{"has_more", "next_cursor", "total"}, ptsKeys(pg))
	p.nextCursor, p.hasMore = pg["next_cursor"], pg["has_more"].(bool)
	total, err := pg["total"].(json.Number).Int64()
	require.NoError(t, err)
	p.total = total
	if p.hasMore {
		require.IsType(t, "", p.nextCursor)
		require.NotEmpty(t, p.nextCursor)
	} else {
		require.Nil(t, p.nextCursor, "next_cursor must be null on the last page")
	}
	return p
}

// ptsWalk follows next_cursor from the first page and returns every item and
// the size of each page; every page reports total.
func (e *ptsEnv) ptsWalk(t *testing.T, prefix, customerID string, q url.Values, total int64) ([]map[string]any, []int) {
	t.Helper()
	var all []map[string]any
	var sizes []int
	q2 := url.Values{}
	for k, v := range q {
		q2[k] = v
	}
	for {
		p := e.ptsStatement(t, prefix, customerID, q2)
		require.Equal(t, total, p.total)
		all = append(all, p.items...)
		sizes = append(sizes, len(p.items))
		if !p.hasMore {
			break
		}
		require.Less(t, len(sizes), 1000, "pagination does not end")
		q2.Set("cursor", p.nextCursor.(string))
	}
	return all, sizes
}

func ptsReversed(s []map[string]any) []map[string]any {
	out := slices.Clone(s)
	slices.Reverse(out)
	return out
}

func TestPointsStatement(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := ptsSetup(t, db)
		s0 := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
		for _, prefix := range ptsPrefixes {
			t.Run(ptsPrefixName(prefix), func(t *testing.T) {
				defer e.ptsSetClock(time.Time{})
				cust := e.ptsCustomer(t, e.tenantID, "Ana Lima")
				neighbour := e.ptsCustomer(t, e.tenantID, "Bia Souza")

				empty := e.ptsStatement(t, prefix, cust, nil)
				require.Empty(t, empty.items)
				require.Equal(t, int64(0), empty.total)
				r := e.ptsDo(t, http.MethodGet, prefix+"/points/statement/"+cust, e.token, nil)
				require.Contains(t, string(r.body), `"data":[]`)

				// 23 entries an hour apart: credits by amount, credits by
				// points, debits with and without an order.
				const n = 23
				var want []map[string]any // oldest first
				for i := range n {
					at := s0.Add(time.Duration(i) * time.Hour)
					e.ptsSetClock(at)
					created, expires := ptsTime(at), ptsTime(ptsExpiry(at))
					switch {
					case i%5 == 3:
						body := map[string]any{"customer_id": cust, "points": 2, "reason": fmt.Sprintf("brinde %d", i)}
						var source any
						if i != 8 {
							body["order_id"] = fmt.Sprintf("troca-%d", i)
							source = fmt.Sprintf("troca-%d", i)
						}
						m := e.ptsDebit(t, prefix, body)
						want = append(want, map[string]any{
							"id": m["entry_id"], "kind": "debit", "points": ptsN(-2), "balance_after": m["new_balance"], "debt_after": ptsN(0),
							"source": map[string]any{"kind": "order", "id": source}, "reason": fmt.Sprintf("brinde %d", i),
							"amount": nil, "expires_at": nil, "created_at": created,
						})
					case i%4 == 1:
						m := e.ptsCredit(t, prefix, map[string]any{"customer_id": cust, "order_id": fmt.Sprintf("ped-%d", i), "points": 2*i + 1})
						want = append(want, map[string]any{
							"id": m["entry_id"], "kind": "credit", "points": ptsN(int64(2*i + 1)), "balance_after": m["new_balance"], "debt_after": ptsN(0),
							"source": map[string]any{"kind": "order", "id": fmt.Sprintf("ped-%d", i)}, "reason": "",
							"amount": nil, "expires_at": expires, "created_at": created,
						})
					default:
						amount := fmt.Sprintf("%d.50", i+1)
						m := e.ptsCredit(t, prefix, map[string]any{"customer_id": cust, "order_id": fmt.Sprintf("ped-%d", i), "amount": json.RawMessage(amount)})
						require.Equal(t, ptsN(int64(i+1)), m["points_credited"])
						want = append(want, map[string]any{
							"id": m["entry_id"], "kind": "credit", "points": ptsN(int64(i + 1)), "balance_after": m["new_balance"], "debt_after": ptsN(0),
							"source": map[string]any{"kind": "order", "id": fmt.Sprintf("ped-%d", i)}, "reason": "",
							"amount": json.Number(decimal.RequireFromString(amount).String()), "expires_at": expires, "created_at": created,
						})
					}
					// Another customer's movements never show.
					e.ptsCredit(t, prefix, map[string]any{"customer_id": neighbour, "order_id": fmt.Sprintf("ped-%d", i), "points": 1})
				}
				require.Equal(t, json.Number("1.5"), want[0]["amount"])
				newest := ptsReversed(want)

				// The first page has the default limit of 20, newest first,
				// with the exact entry keys.
				p := e.ptsStatement(t, prefix, cust, nil)
				require.Equal(t, int64(n), p.total)
				require.True(t, p.hasMore)
				require.Equal(t, newest[:20], p.items)
				for _, it := range p.items {
					require.Equal(t, ptsSorted("id", "kind", "points", "balance_after", "debt_after", "source", "reason", "amount", "expires_at", "created_at"), ptsKeys(it))
				}

				// Walking every page returns each entry once, in order.
				for _, tc := range []struct {
					limit string
					sizes []int
				}{
					{"1", slices.Repeat([]int{1}, n)},
					{"5", []int{5, 5, 5, 5, 3}},
					{"23", []int{23}},
					{"100", []int{23}},
				} {
					all, sizes := e.ptsWalk(t, prefix, cust, url.Values{"limit": {tc.limit}}, n)
					require.Equal(t, tc.sizes, sizes, "limit %s", tc.limit)
					require.Equal(t, newest, all, "limit %s", tc.limit)
				}

				// The period is inclusive of from and exclusive of to.
				at := func(h int) string { return ptsTime(s0.Add(time.Duration(h) * time.Hour)) }
				periods := []struct {
					name     string
					q        url.Values
					from, to int // indexes of want: [from, to)
				}{
					{"from and to", url.Values{"from": {at(5)}, "to": {at(12)}}, 5, 12},
					{"one entry", url.Values{"from": {at(7)}, "to": {at(8)}}, 7, 8},
					{"a microsecond", url.Values{"from": {at(7)}, "to": {ptsTime(s0.Add(7*time.Hour + time.Microsecond))}}, 7, 8},
					{"between entries", url.Values{"from": {ptsTime(s0.Add(7*time.Hour + time.Second))}, "to": {at(8)}}, 8, 8},
					{"from only", url.Values{"from": {at(20)}}, 20, n},
					{"to only", url.Values{"to": {at(2)}}, 0, 2},
					{"from with an offset", url.Values{"from": {"2026-04-01T08:00:00-03:00"}}, 2, n},
					{"to with fractional seconds", url.Values{"to": {"2026-04-01T11:00:00.000001Z"}}, 0, 3},
					{"from as a date", url.Values{"from": {"2026-04-02"}}, 15, n},
					{"to as a date", url.Values{"to": {"2026-04-02"}}, 0, 15},
					{"before everything", url.Values{"to": {"2026-04-01"}}, 0, 0},
					{"after everything", url.Values{"from": {at(n)}}, n, n},
				}
				for _, pc := range periods {
					wantItems := ptsReversed(want[pc.from:pc.to])
					all, _ := e.ptsWalk(t, prefix, cust, pc.q, int64(pc.to-pc.from))
					require.Equal(t, len(wantItems), len(all), pc.name)
					if len(wantItems) > 0 {
						require.Equal(t, wantItems, all, pc.name)
					}
					// Paged through 3 at a time, with the filter on every page.
					q := url.Values{"limit": {"3"}}
					for k, v := range pc.q {
						q[k] = v
					}
					all, sizes := e.ptsWalk(t, prefix, cust, q, int64(pc.to-pc.from))
					require.Equal(t, (len(wantItems)+2)/3+boolInt(len(wantItems) == 0), len(sizes), pc.name)
					require.Equal(t, len(wantItems), len(all), pc.name)
					if len(wantItems) > 0 {
						require.Equal(t, wantItems, all, pc.name)
					}
				}

				// from at or after to: 422 on to.
				for _, q := range []url.Values{
					{"from": {at(5)}, "to": {at(5)}},
					{"from": {at(6)}, "to": {at(5)}},
					{"from": {"2026-04-02"}, "to": {"2026-04-01T23:59:59Z"}},
				} {
					r := e.ptsDo(t, http.MethodGet, prefix+"/points/statement/"+cust+"?"+q.Encode(), e.token, nil)
					ptsRequireValidation(t, r, "to")
				}

				// Malformed parameters: 422 on the parameter.
				walked := e.ptsStatement(t, prefix, cust, url.Values{"limit": {"2"}})
				foreignCursor := ptsCursor(t, &ent.Cursor{ID: cust})
				valueCursor := ptsCursor(t, &ent.Cursor{ID: want[3]["id"].(string), Value: "x"})
				bad := []struct {
					name    string
					q       url.Values
					details []string
				}{
					{"from not a date", url.Values{"from": {"ontem"}}, []string{"from"}},
					{"from month 13", url.Values{"from": {"2026-13-01"}}, []string{"from"}},
					{"from Brazilian date", url.Values{"from": {"01/04/2026"}}, []string{"from"}},
					{"from without offset", url.Values{"from": {"2026-04-01T09:00:00"}}, []string{"from"}},
					{"from with a space", url.Values{"from": {"2026-04-01 09:00:00Z"}}, []string{"from"}},
					{"from as epoch", url.Values{"from": {"1775034000"}}, []string{"from"}},
					{"to not a date", url.Values{"to": {"amanhã"}}, []string{"to"}},
					{"to day 31 of April", url.Values{"to": {"2026-04-31"}}, []string{"to"}},
					{"from and to malformed", url.Values{"from": {"x"}, "to": {"y"}}, []string{"from", "to"}},
					{"limit zero", url.Values{"limit": {"0"}}, []string{"limit"}},
					{"limit negative", url.Values{"limit": {"-1"}}, []string{"limit"}},
					{"limit above 100", url.Values{"limit": {"101"}}, []string{"limit"}},
					{"limit not a number", url.Values{"limit": {"dez"}}, []string{"limit"}},
					{"limit fractional", url.Values{"limit": {"2.5"}}, []string{"limit"}},
					{"cursor garbage", url.Values{"cursor": {"not-a-cursor"}}, []string{"cursor"}},
					{"cursor truncated", url.Values{"cursor": {walked.nextCursor.(string)[:5]}}, []string{"cursor"}},
					{"cursor of another list", url.Values{"cursor": {foreignCursor}}, []string{"cursor"}},
					{"cursor with a value", url.Values{"cursor": {valueCursor}}, []string{"cursor"}},
					{"everything at once", url.Values{"limit": {"0"}, "cursor": {"x"}, "from": {"x"}, "to": {"y"}}, []string{"limit", "cursor", "from", "to"}},
				}
				for _, tc := range bad {
					r := e.ptsDo(t, http.MethodGet, prefix+"/points/statement/"+cust+"?"+tc.q.Encode(), e.token, nil)
					ptsRequireValidation(t, r, tc.details...)
				}
				// A genuine cursor keeps working after all that.
				next := e.ptsStatement(t, prefix, cust, url.Values{"limit": {"2"}, "cursor": {walked.nextCursor.(string)}})
				require.Equal(t, newest[2:4], next.items)
			})
		}
	})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ptsCursor renders c as a next_cursor.
func ptsCursor(t *testing.T, c *ent.Cursor) string {
	t.Helper()
	var b strings.Builder
	c.MarshalGQL(&b)
	s, err := strconv.Unquote(b.String())
	require.NoError(t, err)
	return s
}

func TestPointsAuthorization(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := ptsSetup(t, db)
		cust := e.ptsCustomer(t, e.tenantID, "Ana Lima")
		e.ptsCredit(t, "", map[string]any{"customer_id": cust, "order_id": "ped-0", "points": 100})
		readOnly := e.ptsToken(t, e.tenantID, ptsScopeRead)
		writeOnly := e.ptsToken(t, e.tenantID, ptsScopeWrite)
		others := e.ptsToken(t, e.tenantID, "customers:read", "customers:write", "campaigns:read", "campaigns:write")

		for _, prefix := range ptsPrefixes {
			routes := []struct {
				method, path string
				body         any
				scope        string
				ok           int
			}{
				{http.MethodPost, prefix + "/points/credit", map[string]any{"customer_id": cust, "order_id": "ped-1" + prefix, "points": 10}, ptsScopeWrite, http.StatusCreated},
				{http.MethodPost, prefix + "/points/debit", map[string]any{"customer_id": cust, "order_id": "troca-1" + prefix, "points": 5}, ptsScopeWrite, http.StatusCreated},
				{http.MethodGet, prefix + "/points/balance/" + cust, nil, ptsScopeRead, http.StatusOK},
				{http.MethodGet, prefix + "/points/statement/" + cust, nil, ptsScopeRead, http.StatusOK},
			}
			for _, rt := range routes {
				t.Run(rt.method+" "+rt.path, func(t *testing.T) {
					before, entries := e.ptsStored(t, cust)

					// No token: 401 with a bearer challenge without an error code.
					r := e.ptsDo(t, rt.method, rt.path, "", rt.body)
					m := ptsRequireError(t, r, http.StatusUnauthorized, "invalid_token", "")
					require.Equal(t, "a bearer token is required", m["error_description"])
					require.Equal(t, `Bearer realm="fideliza"`, r.header.Get("WWW-Authenticate"))

					// A token that does not verify, and another scheme.
					r = e.ptsDo(t, rt.method, rt.path, "not.a.jwt", rt.body)
					ptsRequireError(t, r, http.StatusUnauthorized, "invalid_token", "")
					require.Contains(t, r.header.Get("WWW-Authenticate"), `error="invalid_token"`)
					req, err := http.NewRequest(rt.method, e.srv.URL+rt.path, nil)
					require.NoError(t, err)
					req.SetBasicAuth("user", "pass")
					res, err := e.srv.Client().Do(req)
					require.NoError(t, err)
					res.Body.Close()
					require.Equal(t, http.StatusUnauthorized, res.StatusCode)

					// A token without the scope: 403 naming it.
					wrong := writeOnly
					if rt.scope == ptsScopeWrite {
						wrong = readOnly
					}
					for _, tok := range []string{wrong, others} {
						r = e.ptsDo(t, rt.method, rt.path, tok, rt.body)
						m := ptsRequireError(t, r, http.StatusForbidden, "insufficient_scope", "")
						require.Equal(t, "the access token lacks the scope "+rt.scope, m["error_description"])
						require.Equal(t, `Bearer realm="fideliza", error="insufficient_scope", scope="`+rt.scope+`"`, r.header.Get("WWW-Authenticate"))
					}
					// The refused calls moved nothing.
					e.ptsRequireStored(t, cust, before, entries)

					// The token of the scope alone is enough.
					right := readOnly
					if rt.scope == ptsScopeWrite {
						right = writeOnly
					}
					r = e.ptsDo(t, rt.method, rt.path, right, rt.body)
					require.Equal(t, rt.ok, r.status, "%s", r.body)
				})
			}
		}
		e.ptsRequireStored(t, cust, 100+10+10-5-5, 5)
	})
}

// Concurrent calls neither credit an order twice nor take a balance below
// zero.
func TestPointsConcurrency(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := ptsSetup(t, db)
		for _, prefix := range ptsPrefixes {
			t.Run(ptsPrefixName(prefix), func(t *testing.T) {
				cust := e.ptsCustomer(t, e.tenantID, "Ana Lima")
				const callers = 8
				run := func(body func(i int) map[string]any, path string) []ptsResp {
					out := make([]ptsResp, callers)
					var wg sync.WaitGroup
					for i := range callers {
						wg.Add(1)
						go func() {
							defer wg.Done()
							out[i] = e.ptsDo(t, http.MethodPost, prefix+path, e.token, body(i))
						}()
					}
					wg.Wait()
					return out
				}

				// The same order credited at once: one credit, every answer
				// the same, all but one marked as replays.
				rs := run(func(int) map[string]any {
					return map[string]any{"customer_id": cust, "order_id": "ped-1", "points": 100}
				}, "/points/credit")
				replays := 0
				for _, r := range rs {
					require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
					require.Equal(t, string(rs[0].body), string(r.body))
					if r.header.Get("Idempotent-Replayed") == "true" {
						replays++
					}
				}
				require.Equal(t, callers-1, replays)
				e.ptsRequireStored(t, cust, 100, 1)

				// Debits of 30 at once from 100: three pass, the rest are refused.
				rs = run(func(i int) map[string]any {
					return map[string]any{"customer_id": cust, "order_id": fmt.Sprintf("troca-%d", i), "points": 30}
				}, "/points/debit")
				var balances []string
				refused := 0
				for _, r := range rs {
					switch r.status {
					case http.StatusCreated:
						balances = append(balances, string(r.obj(t)["new_balance"].(json.Number)))
					default:
						ptsRequireError(t, r, http.StatusUnprocessableEntity, "insufficient_points", "points")
						refused++
					}
				}
				sort.Strings(balances)
				require.Equal(t, []string{"10", "40", "70"}, balances)
				require.Equal(t, callers-3, refused)
				e.ptsRequireStored(t, cust, 10, 4)
			})
		}
	})
}
