package rest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/viewer"
)

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

// ptsCPF returns the n-th valid CPF of the tests.
func ptsCPF(n int) string { return cpfCheck(fmt.Sprintf("%09d", 123456000+n)) }

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

// ptsRaw sends a request with a raw body and content type.
func (e *ptsEnv) ptsRaw(t *testing.T, method, path, token, contentType, body string) apiResp {
	t.Helper()
	return apiRaw(t, e.srv, method, path, token, contentType, body)
}

// ptsDo sends body (see apiBody).
func (e *ptsEnv) ptsDo(t *testing.T, method, path, token string, body any) apiResp {
	t.Helper()
	return apiDo(t, e.srv, method, path, token, body)
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
	require.Equal(t, sortedCopy("customer_id", "points_balance", "points_pending", "points_debt", "level", "next_level", "points_to_next_level",
		"points_earned_last_12_months", "lifetime_value", "expiring_soon"), sortedKeys(m), "%s", r.body)
	return m
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

// ptsRequireValidation checks a 422 validation_error whose field is the
// first of details.
func ptsRequireValidation(t *testing.T, r apiResp, details ...string) map[string]any {
	t.Helper()
	return requireV1Error(t, r, http.StatusUnprocessableEntity, "validation_error", details[0], details...)
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
