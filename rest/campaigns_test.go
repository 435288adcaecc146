package rest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/ent/campaign"
	"github.com/fideliza/fideliza/ent/pointsentry"
	"github.com/fideliza/fideliza/ent/redemption"
	"github.com/fideliza/fideliza/ent/schema/viewer"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/testclock"
)

// The tests of the /v1 campaign endpoints (list, read, create, deactivate,
// validate, redeem) and of the point-of-sale flow that ends in
// POST /points/credit: a real server over a real database with tokens of
// the real token service, and a controllable clock for the App. Every
// helper is prefixed with camp.

const (
	campScopeRead  = "campaigns:read"
	campScopeWrite = "campaigns:write"
)

// campT0 is the App's time when a test starts.
var campT0 = time.Date(2026, 5, 4, 15, 0, 0, 0, time.UTC)

// campEnv is the test environment on a clock at campT0, with a token of
// its tenant holding every scope the flows need.
type campEnv struct {
	*TestEnv
	ctx   context.Context // the tenant's
	token string

	mu     sync.Mutex
	nextID int
}

func campSys() context.Context { return viewer.SystemContext(context.Background()) }

func campSetup(t *testing.T, db *storage.DB) *campEnv {
	t.Helper()
	e := &campEnv{TestEnv: newTestEnv(t, db, func(s *ServerSetup) { s.TestClock = testclock.New(campT0) })}
	e.ctx = viewer.TenantContext(context.Background(), e.tenantID)
	e.token = e.tokenFor(t, campScopeRead, campScopeWrite, "customers:read", "loyalty:read", "loyalty:write")
	return e
}

type campResp struct {
	status int
	header http.Header
	body   []byte
}

// obj decodes the body as one JSON object, numbers as json.Number.
func (r campResp) obj(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&m), "body: %s", r.body)
	return m
}

// campDo sends body (nil: none; string: as is; else its JSON) as
// application/json, with the headers given as pairs.
func (e *campEnv) campDo(t *testing.T, method, path, token string, body any, headers ...string) campResp {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		require.NoError(t, err)
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	require.NoError(t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := e.srv.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return campResp{status: res.StatusCode, header: res.Header, body: b}
}

func campKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func campSorted(s ...string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return s
}

// campRequireError checks an error answer: status, code, the exact keys of
// the body, its field and, for validation_error, the fields of details.
func campRequireError(t *testing.T, r campResp, status int, code, field string, details ...string) map[string]any {
	t.Helper()
	require.Equal(t, status, r.status, "%s", r.body)
	require.Equal(t, "application/json", r.header.Get("Content-Type"))
	m := r.obj(t)
	require.Equal(t, code, m["error"], "%s", r.body)
	switch {
	case code == "insufficient_scope" || code == "invalid_token":
		require.Equal(t, campSorted("error", "error_description"), campKeys(m), "%s", r.body)
		return m
	case code == "validation_error":
		require.Equal(t, campSorted("error", "message", "field", "details"), campKeys(m), "%s", r.body)
		var got []string
		for _, d := range m["details"].([]any) {
			dm := d.(map[string]any)
			require.Equal(t, campSorted("field", "message"), campKeys(dm))
			require.NotEmpty(t, dm["message"])
			got = append(got, dm["field"].(string))
		}
		require.Equal(t, details, got, "%s", r.body)
	case field != "":
		require.Equal(t, campSorted("error", "message", "field"), campKeys(m), "%s", r.body)
	default:
		require.Equal(t, campSorted("error", "message"), campKeys(m), "%s", r.body)
	}
	require.NotEmpty(t, m["message"])
	if field != "" {
		require.Equal(t, field, m["field"], "%s", r.body)
	}
	return m
}

// campDec reads a JSON number of a decoded body as a decimal.
func campDec(t *testing.T, v any) decimal.Decimal {
	t.Helper()
	n, ok := v.(json.Number)
	require.True(t, ok, "%v (%T) is not a number", v, v)
	d, err := decimal.NewFromString(string(n))
	require.NoError(t, err)
	return d
}

// campRequireDec checks a JSON number equals want, whatever its notation.
func campRequireDec(t *testing.T, want string, v any, what string) {
	t.Helper()
	got := campDec(t, v)
	require.True(t, got.Equal(decimal.RequireFromString(want)), "%s: want %s, got %s", what, want, got)
}

func campInt(t *testing.T, v any) int64 {
	t.Helper()
	n, ok := v.(json.Number)
	require.True(t, ok, "%v (%T) is not a number", v, v)
	i, err := n.Int64()
	require.NoError(t, err)
	return i
}

// campStamp renders a time as the API does.
func campStamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// campCPF makes a fresh valid CPF.
func (e *campEnv) campCPF() string {
	e.mu.Lock()
	e.nextID++
	n := e.nextID
	e.mu.Unlock()
	base := fmt.Sprintf("%09d", 300000000+n*7919)
	digit := func(s string) byte {
		sum := 0
		for i := range len(s) {
			sum += int(s[i]-'0') * (len(s) + 1 - i)
		}
		return byte('0' + sum*10%11%10)
	}
	base += string(digit(base))
	return base + string(digit(base))
}

// campCustomer creates a customer of the env's tenant.
func (e *campEnv) campCustomer(t *testing.T, name string) string {
	t.Helper()
	cpf := e.campCPF()
	c, err := e.app.Customers.CreateCustomer(e.ctx, customers.CustomerInput{
		Name: opt.Of(name), Email: opt.Of("cliente" + cpf + "@example.com"), CPF: opt.Of(cpf),
	})
	require.NoError(t, err)
	return c.ID
}

// campSegment creates a segment holding the customers.
func (e *campEnv) campSegment(t *testing.T, name string, customerIDs ...string) string {
	t.Helper()
	seg, err := e.db.Ent.Segment.Create().SetName(name).Save(e.ctx)
	require.NoError(t, err)
	for _, id := range customerIDs {
		require.NoError(t, e.db.Ent.Customer.UpdateOneID(id).AddSegmentIDs(seg.ID).Exec(e.ctx))
	}
	return seg.ID
}

// campAt is the App's clock moved by d, as the API renders it.
func (e *campEnv) campAt(d time.Duration) string { return campStamp(e.clock.Now().Add(d)) }

// campBody is a valid create body of the type: active from an hour ago for
// thirty days; kv pairs change it (a nil value deletes the key).
func (e *campEnv) campBody(typ string, kv ...any) map[string]any {
	b := map[string]any{
		"name": "Campanha " + typ, "description": "Campanha de teste " + typ, "type": typ,
		"starts_at": e.campAt(-time.Hour), "ends_at": e.campAt(30 * 24 * time.Hour),
	}
	switch typ {
	case "discount":
		b["discount"] = map[string]any{"mode": "percentage", "value": 10}
	case "cashback":
		b["discount"] = map[string]any{"mode": "percentage", "value": 5, "credit_after_days": 0}
	case "bonus_points":
		b["discount"] = map[string]any{"multiplier": 2}
	case "gift":
		b["discount"] = map[string]any{"gift_sku": "BRINDE-1"}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(b, kv[i].(string))
			continue
		}
		b[kv[i].(string)] = kv[i+1]
	}
	return b
}

// campCreate posts a campaign and returns the 201 body.
func (e *campEnv) campCreate(t *testing.T, body map[string]any) map[string]any {
	t.Helper()
	r := e.campDo(t, http.MethodPost, "/v1/campaigns", e.token, body)
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	m := r.obj(t)
	require.Equal(t, "/v1/campaigns/"+m["id"].(string), r.header.Get("Location"))
	return m
}

// campCreateID posts a campaign and returns its id.
func (e *campEnv) campCreateID(t *testing.T, typ string, kv ...any) string {
	t.Helper()
	return e.campCreate(t, e.campBody(typ, kv...))["id"].(string)
}

// campItem is a cart line.
func campItem(sku, category string, quantity int, unitPrice string) map[string]any {
	return map[string]any{"sku": sku, "category": category, "quantity": quantity, "unit_price": json.Number(unitPrice)}
}

// campCart is the cart of most tests: R$ 25.00 of coffee and R$ 15.00 of
// juice.
func campCart() map[string]any {
	return map[string]any{"subtotal": json.Number("40.00"), "items": []any{
		campItem("SKU-CAFE", "mercearia", 2, "12.50"),
		campItem("SKU-SUCO", "bebidas", 3, "5.00"),
	}}
}

// campValidate validates the cart for the customer at the channel and
// returns the 200 body.
func (e *campEnv) campValidate(t *testing.T, customerID, channel string, cart map[string]any, explain bool) map[string]any {
	t.Helper()
	path := "/v1/campaigns/validate"
	if explain {
		path += "?explain=true"
	}
	r := e.campDo(t, http.MethodPost, path, e.token, map[string]any{
		"customer_id": customerID, "store_id": "loja-1", "channel": channel, "cart": cart,
	})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	return r.obj(t)
}

// campTokenFor validates the standard cart at the point of sale and
// returns the validation token.
func (e *campEnv) campTokenFor(t *testing.T, customerID string) string {
	t.Helper()
	tok, _ := e.campValidate(t, customerID, "pdv", campCart(), false)["validation_token"].(string)
	require.NotEmpty(t, tok)
	return tok
}

// campEligible indexes the eligible campaigns of a validate body by id.
func campEligible(t *testing.T, v map[string]any) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, x := range v["eligible_campaigns"].([]any) {
		m := x.(map[string]any)
		out[m["campaign_id"].(string)] = m
	}
	return out
}

// campRedeemBody is a redeem body.
func campRedeemBody(customerID, orderID, token, amountPaid string) map[string]any {
	return map[string]any{"customer_id": customerID, "order_id": orderID, "validation_token": token, "amount_paid": json.Number(amountPaid)}
}

func (e *campEnv) campRedeem(t *testing.T, campaignID string, body any, headers ...string) campResp {
	t.Helper()
	return e.campDo(t, http.MethodPost, "/v1/campaigns/"+campaignID+"/redeem", e.token, body, headers...)
}

// campRedemptions counts the redemption rows of a campaign.
func (e *campEnv) campRedemptions(t *testing.T, campaignID string) int {
	t.Helper()
	n, err := e.db.Ent.Redemption.Query().Where(redemption.CampaignID(campaignID)).Count(e.ctx)
	require.NoError(t, err)
	return n
}

// campCampaignKeys are the keys of a campaign.
var campCampaignKeys = campSorted("id", "name", "description", "type", "status", "starts_at", "ends_at", "segment_id", "predictive_segment",
	"channels", "store_codes", "store_groups", "discount", "eligibility", "limits", "budget", "stacking", "priority", "requires_code", "redemptions_count", "redemptions_limit",
	"created_at", "updated_at")

func TestCampaignCreate(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := campSetup(t, db)
		cust := e.campCustomer(t, "Ana Souza")
		seg := e.campSegment(t, "vip", cust)

		t.Run("active discount: the full campaign", func(t *testing.T) {
			starts := e.clock.Now().Add(-time.Hour).In(time.FixedZone("-03", -3*3600))
			body := e.campBody("discount",
				"starts_at", starts.Format(time.RFC3339), "segment_id", seg, "channels", []string{"ecommerce", "app"},
				"discount", map[string]any{"mode": "percentage", "value": json.Number("12.5")},
				"eligibility", map[string]any{"min_subtotal": json.Number("50.00"), "skus": []string{"SKU-1"}, "categories": []string{"bebidas"}},
				"limits", map[string]any{"per_customer": 2, "total": 100})
			m := e.campCreate(t, body)
			require.Equal(t, campCampaignKeys, campKeys(m))
			require.Regexp(t, `^cmp_[0-9a-z]{26}$`, m["id"])
			require.Equal(t, "Campanha discount", m["name"])
			require.Equal(t, "Campanha de teste discount", m["description"])
			require.Equal(t, "discount", m["type"])
			require.Equal(t, "active", m["status"])
			require.Equal(t, campStamp(starts), m["starts_at"], "rendered in UTC")
			require.Equal(t, body["ends_at"], m["ends_at"])
			require.Equal(t, seg, m["segment_id"])
			require.Equal(t, []any{"ecommerce", "app"}, m["channels"])
			d := m["discount"].(map[string]any)
			require.Equal(t, []string{"mode", "value"}, campKeys(d))
			require.Equal(t, "percentage", d["mode"])
			campRequireDec(t, "12.5", d["value"], "discount.value")
			el := m["eligibility"].(map[string]any)
			campRequireDec(t, "50", el["min_subtotal"], "min_subtotal")
			require.Equal(t, []any{"SKU-1"}, el["skus"])
			require.Equal(t, []any{"bebidas"}, el["categories"])
			require.Equal(t, map[string]any{"per_customer": json.Number("2"), "total": json.Number("100")}, m["limits"])
			require.Equal(t, json.Number("0"), m["redemptions_count"])
			require.Equal(t, json.Number("100"), m["redemptions_limit"])
			require.NotEmpty(t, m["created_at"])
			require.NotEmpty(t, m["updated_at"])

			// GET answers the same campaign.
			r := e.campDo(t, http.MethodGet, "/v1/campaigns/"+m["id"].(string), e.token, nil)
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			require.Equal(t, m, r.obj(t))
		})

		t.Run("scheduled when it starts later; defaults", func(t *testing.T) {
			m := e.campCreate(t, e.campBody("gift", "starts_at", e.campAt(time.Hour), "description", nil))
			require.Equal(t, "scheduled", m["status"])
			require.Equal(t, "", m["description"])
			require.Nil(t, m["segment_id"], "absent segment_id: every customer")
			require.Equal(t, []any{}, m["channels"], "absent channels: every channel")
			require.Equal(t, map[string]any{"gift_sku": "BRINDE-1"}, m["discount"])
			require.Equal(t, map[string]any{"min_subtotal": nil, "skus": []any{}, "categories": []any{}, "brands": []any{}}, m["eligibility"])
			require.Equal(t, map[string]any{"per_customer": nil, "total": nil}, m["limits"])
			require.Nil(t, m["redemptions_limit"])
		})

		t.Run("starting now is active", func(t *testing.T) {
			m := e.campCreate(t, e.campBody("discount", "starts_at", e.campAt(0)))
			require.Equal(t, "active", m["status"])
		})

		t.Run("each type's benefit", func(t *testing.T) {
			m := e.campCreate(t, e.campBody("cashback", "discount", map[string]any{"mode": "fixed_amount", "value": json.Number("15.00")}))
			d := m["discount"].(map[string]any)
			require.Equal(t, "fixed_amount", d["mode"])
			campRequireDec(t, "15", d["value"], "value")
			require.Equal(t, json.Number("0"), d["credit_after_days"], "cashback without credit_after_days is credited at once")

			m = e.campCreate(t, e.campBody("cashback", "discount", map[string]any{"mode": "percentage", "value": 5, "credit_after_days": 7}))
			require.Equal(t, json.Number("7"), m["discount"].(map[string]any)["credit_after_days"])

			m = e.campCreate(t, e.campBody("bonus_points", "discount", map[string]any{"multiplier": json.Number("1.5")}))
			d = m["discount"].(map[string]any)
			require.Equal(t, []string{"multiplier"}, campKeys(d))
			campRequireDec(t, "1.5", d["multiplier"], "multiplier")

			m = e.campCreate(t, e.campBody("discount", "discount", map[string]any{"mode": "free_shipping"}))
			require.Equal(t, map[string]any{"mode": "free_shipping"}, m["discount"])
		})
	})
}

func TestCampaignCreateValidation(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := campSetup(t, db)
		disc := func(d map[string]any) any { return d }
		cases := []struct {
			name    string
			body    map[string]any
			details []string
		}{
			{"empty body", map[string]any{}, []string{"name", "type", "starts_at", "ends_at"}},
			{"missing name", e.campBody("discount", "name", nil), []string{"name"}},
			{"blank name", e.campBody("discount", "name", "   "), []string{"name"}},
			{"missing type", e.campBody("discount", "type", nil), []string{"type"}},
			{"unknown type", e.campBody("discount", "type", "coupon"), []string{"type"}},
			{"missing starts_at", e.campBody("discount", "starts_at", nil), []string{"starts_at"}},
			{"missing ends_at", e.campBody("discount", "ends_at", nil), []string{"ends_at"}},
			{"starts_at without offset", e.campBody("discount", "starts_at", "2026-05-04T10:00:00"), []string{"starts_at"}},
			{"ends_at not a date", e.campBody("discount", "ends_at", "amanhã"), []string{"ends_at"}},
			{"ends before starts", e.campBody("discount", "starts_at", e.campAt(48*time.Hour), "ends_at", e.campAt(24*time.Hour)), []string{"ends_at"}},
			{"ends when it starts", e.campBody("discount", "starts_at", e.campAt(time.Hour), "ends_at", e.campAt(time.Hour)), []string{"ends_at"}},
			{"ended already", e.campBody("discount", "starts_at", e.campAt(-48*time.Hour), "ends_at", e.campAt(-time.Hour)), []string{"ends_at"}},
			{"discount without discount", e.campBody("discount", "discount", nil), []string{"discount.mode"}},
			{"unknown mode", e.campBody("discount", "discount", disc(map[string]any{"mode": "bogo", "value": 10})), []string{"discount.mode"}},
			{"percentage without value", e.campBody("discount", "discount", disc(map[string]any{"mode": "percentage"})), []string{"discount.value"}},
			{"percentage zero", e.campBody("discount", "discount", disc(map[string]any{"mode": "percentage", "value": 0})), []string{"discount.value"}},
			{"percentage above 100", e.campBody("discount", "discount", disc(map[string]any{"mode": "percentage", "value": json.Number("100.01")})), []string{"discount.value"}},
			{"fixed amount zero", e.campBody("discount", "discount", disc(map[string]any{"mode": "fixed_amount", "value": 0})), []string{"discount.value"}},
			{"fixed amount negative", e.campBody("discount", "discount", disc(map[string]any{"mode": "fixed_amount", "value": -5})), []string{"discount.value"}},
			{"free shipping with value", e.campBody("discount", "discount", disc(map[string]any{"mode": "free_shipping", "value": 5})), []string{"discount.value"}},
			{"value not a number", e.campBody("discount", "discount", disc(map[string]any{"mode": "percentage", "value": "10"})), []string{"discount.value"}},
			{"cashback without mode", e.campBody("cashback", "discount", disc(map[string]any{"credit_after_days": 3})), []string{"discount.mode"}},
			{"cashback negative days", e.campBody("cashback", "discount", disc(map[string]any{"mode": "percentage", "value": 5, "credit_after_days": -1})), []string{"discount.credit_after_days"}},
			{"credit_after_days on a discount", e.campBody("discount", "discount", disc(map[string]any{"mode": "percentage", "value": 5, "credit_after_days": 3})), []string{"discount.credit_after_days"}},
			{"bonus without multiplier", e.campBody("bonus_points", "discount", nil), []string{"discount.multiplier"}},
			{"bonus multiplier 1", e.campBody("bonus_points", "discount", disc(map[string]any{"multiplier": 1})), []string{"discount.multiplier"}},
			{"bonus multiplier below 1", e.campBody("bonus_points", "discount", disc(map[string]any{"multiplier": json.Number("0.5")})), []string{"discount.multiplier"}},
			{"gift without sku", e.campBody("gift", "discount", nil), []string{"discount.gift_sku"}},
			{"gift blank sku", e.campBody("gift", "discount", disc(map[string]any{"gift_sku": " "})), []string{"discount.gift_sku"}},
			{"mode and value on a gift", e.campBody("gift", "discount", disc(map[string]any{"gift_sku": "G", "mode": "percentage", "value": 10})), []string{"discount.mode", "discount.value"}},
			{"multiplier on a discount", e.campBody("discount", "discount", disc(map[string]any{"mode": "percentage", "value": 10, "multiplier": 2})), []string{"discount.multiplier"}},
			{"gift_sku on a cashback", e.campBody("cashback", "discount", disc(map[string]any{"mode": "percentage", "value": 10, "gift_sku": "G"})), []string{"discount.gift_sku"}},
			{"credit_after_days on bonus points", e.campBody("bonus_points", "discount", disc(map[string]any{"multiplier": 2, "credit_after_days": 0})), []string{"discount.credit_after_days"}},
			{"unknown segment", e.campBody("discount", "segment_id", "seg_00000000000000000000000000"), []string{"segment_id"}},
			{"per_customer zero", e.campBody("discount", "limits", map[string]any{"per_customer": 0}), []string{"limits.per_customer"}},
			{"total zero", e.campBody("discount", "limits", map[string]any{"total": 0}), []string{"limits.total"}},
			{"both limits negative", e.campBody("discount", "limits", map[string]any{"per_customer": -1, "total": -1}), []string{"limits.per_customer", "limits.total"}},
			{"negative min_subtotal", e.campBody("discount", "eligibility", map[string]any{"min_subtotal": -1}), []string{"eligibility.min_subtotal"}},
			{"blank channel", e.campBody("discount", "channels", []string{"pdv", ""}), []string{"channels"}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := e.campDo(t, http.MethodPost, "/v1/campaigns", e.token, tc.body)
				campRequireError(t, r, http.StatusUnprocessableEntity, "validation_error", tc.details[0], tc.details...)
			})
		}

		t.Run("a limit of the wrong type", func(t *testing.T) {
			r := e.campDo(t, http.MethodPost, "/v1/campaigns", e.token, e.campBody("discount", "limits", map[string]any{"total": "10"}))
			campRequireError(t, r, http.StatusUnprocessableEntity, "validation_error", "limits.total", "limits.total")
		})
		t.Run("malformed JSON", func(t *testing.T) {
			r := e.campDo(t, http.MethodPost, "/v1/campaigns", e.token, `{"name": "x",`)
			campRequireError(t, r, http.StatusBadRequest, "invalid_json", "")
		})
		t.Run("another tenant's segment is unknown", func(t *testing.T) {
			other, err := e.app.Backoffice.CreateTenant(campSys(), "Outra Loja", nil)
			require.NoError(t, err)
			seg, err := e.db.Ent.Segment.Create().SetName("vip").Save(viewer.TenantContext(context.Background(), other.ID))
			require.NoError(t, err)
			r := e.campDo(t, http.MethodPost, "/v1/campaigns", e.token, e.campBody("discount", "segment_id", seg.ID))
			campRequireError(t, r, http.StatusUnprocessableEntity, "validation_error", "segment_id", "segment_id")
		})

		n, err := e.db.Ent.Campaign.Query().Count(campSys())
		require.NoError(t, err)
		require.Zero(t, n, "no refused campaign is stored")
	})
}

// campListed reads one page of GET /v1/campaigns.
type campListed struct {
	ids, statuses []string
	next          any
	hasMore       bool
	total         int64
}

func (e *campEnv) campList(t *testing.T, q url.Values) campListed {
	t.Helper()
	r := e.campDo(t, http.MethodGet, "/v1/campaigns?"+q.Encode(), e.token, nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	m := r.obj(t)
	require.Equal(t, []string{"data", "pagination"}, campKeys(m))
	var out campListed
	for _, x := range m["data"].([]any) {
		c := x.(map[string]any)
		require.Equal(t, campCampaignKeys, campKeys(c))
		out.ids = append(out.ids, c["id"].(string))
		out.statuses = append(out.statuses, c["status"].(string))
	}
	p := m["pagination"].(map[string]any)
	require.Equal(t, []string{"has_more", "next_cursor", "total"}, campKeys(p))
	out.next, out.hasMore, out.total = p["next_cursor"], p["has_more"].(bool), campInt(t, p["total"])
	if !out.hasMore {
		require.Nil(t, out.next)
	}
	return out
}

func TestCampaignList(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := campSetup(t, db)
		day := 24 * time.Hour
		// Created in this order, so listed the other way round.
		ecommerce := e.campCreateID(t, "discount", "channels", []string{"ecommerce"})
		everyChannel := e.campCreateID(t, "cashback")
		a := e.campCreateID(t, "bonus_points", "channels", []string{"app", "pdv"})
		scheduled := e.campCreateID(t, "gift", "starts_at", e.campAt(2*day), "channels", []string{"ecommerce"})
		deleted := e.campCreateID(t, "discount")
		endsSoon := e.campCreateID(t, "discount", "ends_at", e.campAt(time.Hour))
		paused := e.campCreateID(t, "cashback")
		r := e.campDo(t, http.MethodDelete, "/v1/campaigns/"+deleted, e.token, nil)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		_, err := e.app.Campaigns.PauseCampaign(e.ctx, paused)
		require.NoError(t, err)
		// endsSoon passes its end; no lifecycle job has run.
		e.clock.Advance(2 * time.Hour)
		stored, err := e.db.Ent.Campaign.Get(e.ctx, endsSoon)
		require.NoError(t, err)
		require.Equal(t, campaign.StatusScheduled, stored.Status, "the stored status is stale (the lifecycle job has not run)")

		all := e.campList(t, url.Values{})
		require.Equal(t, []string{paused, endsSoon, deleted, scheduled, a, everyChannel, ecommerce}, all.ids, "newest first")
		require.Equal(t, []string{"paused", "ended", "ended", "scheduled", "active", "active", "active"}, all.statuses)
		require.EqualValues(t, 7, all.total)
		require.False(t, all.hasMore)

		for _, tc := range []struct {
			query url.Values
			want  []string
		}{
			{url.Values{"status": {"active"}}, []string{a, everyChannel, ecommerce}},
			{url.Values{"status": {"scheduled"}}, []string{scheduled}},
			{url.Values{"status": {"ended"}}, []string{endsSoon, deleted}},
			{url.Values{"status": {"paused"}}, []string{paused}},
			{url.Values{"type": {"cashback"}}, []string{paused, everyChannel}},
			{url.Values{"type": {"gift"}}, []string{scheduled}},
			{url.Values{"channel": {"ecommerce"}}, []string{paused, endsSoon, deleted, scheduled, everyChannel, ecommerce}},
			{url.Values{"channel": {"app"}}, []string{paused, endsSoon, deleted, a, everyChannel}},
			{url.Values{"channel": {"totem"}}, []string{paused, endsSoon, deleted, everyChannel}},
			{url.Values{"status": {"active"}, "channel": {"ecommerce"}}, []string{everyChannel, ecommerce}},
			{url.Values{"status": {"active"}, "type": {"discount"}, "channel": {"ecommerce"}}, []string{ecommerce}},
			{url.Values{"status": {"scheduled"}, "type": {"discount"}}, nil},
		} {
			t.Run(tc.query.Encode(), func(t *testing.T) {
				got := e.campList(t, tc.query)
				require.Equal(t, tc.want, got.ids)
				require.EqualValues(t, len(tc.want), got.total)
				if s := tc.query.Get("status"); s != "" {
					for _, st := range got.statuses {
						require.Equal(t, s, st)
					}
				}
			})
		}

		t.Run("pages", func(t *testing.T) {
			var seen []string
			q := url.Values{"limit": {"3"}}
			total := 7
			for pages := 1; ; pages++ {
				p := e.campList(t, q)
				require.EqualValues(t, total, p.total)
				require.LessOrEqual(t, len(p.ids), 3)
				seen = append(seen, p.ids...)
				if !p.hasMore {
					require.Equal(t, 3, pages)
					break
				}
				q.Set("cursor", p.next.(string))
				// A campaign created meanwhile does not shift the pages.
				if pages == 1 {
					e.campCreateID(t, "gift")
					total++
				}
			}
			require.Equal(t, all.ids, seen)

			p := e.campList(t, url.Values{"status": {"active"}, "limit": {"2"}})
			require.Len(t, p.ids, 2)
			require.True(t, p.hasMore)
			require.EqualValues(t, 4, p.total, "the new gift is active too")
		})

		t.Run("default page of 20", func(t *testing.T) {
			for range 15 {
				e.campCreateID(t, "gift")
			}
			p := e.campList(t, url.Values{})
			require.Len(t, p.ids, 20)
			require.True(t, p.hasMore)
			require.EqualValues(t, 23, p.total)
		})

		t.Run("bad parameters", func(t *testing.T) {
			for _, tc := range []struct{ query, field string }{
				{"status=live", "status"},
				{"type=coupon", "type"},
				{"limit=0", "limit"},
				{"limit=101", "limit"},
				{"limit=ten", "limit"},
				{"cursor=nonsense", "cursor"},
			} {
				r := e.campDo(t, http.MethodGet, "/v1/campaigns?"+tc.query, e.token, nil)
				campRequireError(t, r, http.StatusUnprocessableEntity, "validation_error", tc.field, tc.field)
			}
		})
	})
}

func TestCampaignReadAndDelete(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := campSetup(t, db)
		cust := e.campCustomer(t, "Bia Lima")
		active := e.campCreateID(t, "discount")
		scheduled := e.campCreateID(t, "gift", "starts_at", e.campAt(time.Hour))
		require.Contains(t, campEligible(t, e.campValidate(t, cust, "pdv", campCart(), false)), active)

		r := e.campDo(t, http.MethodGet, "/v1/campaigns/cmp_00000000000000000000000000", e.token, nil)
		campRequireError(t, r, http.StatusNotFound, "not_found", "")
		r = e.campDo(t, http.MethodDelete, "/v1/campaigns/cmp_00000000000000000000000000", e.token, nil)
		campRequireError(t, r, http.StatusNotFound, "not_found", "")

		r = e.campDo(t, http.MethodDelete, "/v1/campaigns/"+active, e.token, nil)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		first := r.obj(t)
		require.Equal(t, campCampaignKeys, campKeys(first))
		require.Equal(t, "ended", first["status"])
		stored, err := e.db.Ent.Campaign.Get(e.ctx, active)
		require.NoError(t, err)
		require.Equal(t, campaign.StatusEnded, stored.Status)

		// Again: the same answer, nothing changes.
		r = e.campDo(t, http.MethodDelete, "/v1/campaigns/"+active, e.token, nil)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		require.Equal(t, first, r.obj(t))

		r = e.campDo(t, http.MethodGet, "/v1/campaigns/"+active, e.token, nil)
		require.Equal(t, http.StatusOK, r.status)
		require.Equal(t, first, r.obj(t))
		require.NotContains(t, campEligible(t, e.campValidate(t, cust, "pdv", campCart(), false)), active)

		r = e.campDo(t, http.MethodDelete, "/v1/campaigns/"+scheduled, e.token, nil)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		require.Equal(t, "ended", r.obj(t)["status"])
		e.clock.Advance(2 * time.Hour)
		r = e.campDo(t, http.MethodGet, "/v1/campaigns/"+scheduled, e.token, nil)
		require.Equal(t, "ended", r.obj(t)["status"], "an ended campaign does not start")

		t.Run("another tenant's campaign", func(t *testing.T) {
			other, err := e.app.Backoffice.CreateTenant(campSys(), "Outra Loja", nil)
			require.NoError(t, err)
			starts, ends := e.clock.Now().Add(-time.Hour), e.clock.Now().Add(time.Hour)
			c, err := e.app.Campaigns.CreateCampaign(viewer.TenantContext(context.Background(), other.ID), campaigns.CampaignInput{
				Name: "Alheia", Type: "gift", StartsAt: &starts, EndsAt: &ends, Discount: &campaigns.DiscountInput{GiftSKU: opt.Of("G").Ptr()},
			})
			require.NoError(t, err)
			r := e.campDo(t, http.MethodGet, "/v1/campaigns/"+c.ID, e.token, nil)
			campRequireError(t, r, http.StatusNotFound, "not_found", "")
			r = e.campDo(t, http.MethodDelete, "/v1/campaigns/"+c.ID, e.token, nil)
			campRequireError(t, r, http.StatusNotFound, "not_found", "")
			require.NotContains(t, e.campList(t, url.Values{}).ids, c.ID)
			require.NotContains(t, campEligible(t, e.campValidate(t, cust, "pdv", campCart(), false)), c.ID)
			got, err := e.db.Ent.Campaign.Get(campSys(), c.ID)
			require.NoError(t, err)
			require.Equal(t, campaign.StatusScheduled, got.Status, "stored scheduled until the lifecycle job activates it")
		})
	})
}

func TestCampaignValidate(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := campSetup(t, db)
		cust := e.campCustomer(t, "Carla Dias")
		vip := e.campSegment(t, "vip", cust)
		others := e.campSegment(t, "outros")

		discount := e.campCreateID(t, "discount", "name", "Bebidas 10%", "channels", []string{"pdv"},
			"eligibility", map[string]any{"categories": []string{"bebidas"}})
		cashback := e.campCreateID(t, "cashback", "name", "Cashback R$ 15", "segment_id", vip,
			"discount", map[string]any{"mode": "fixed_amount", "value": 15, "credit_after_days": 7})
		bonus := e.campCreateID(t, "bonus_points", "name", "Café em dobro", "eligibility", map[string]any{"skus": []string{"SKU-CAFE"}})
		gift := e.campCreateID(t, "gift", "name", "Brinde", "eligibility", map[string]any{"min_subtotal": 30})
		shipping := e.campCreateID(t, "discount", "name", "Frete grátis", "channels", []string{"ecommerce"},
			"discount", map[string]any{"mode": "free_shipping"})
		segment := e.campCreateID(t, "discount", "name", "Outros", "segment_id", others)
		minimum := e.campCreateID(t, "discount", "name", "Acima de 100", "eligibility", map[string]any{"min_subtotal": json.Number("100.00")})
		later := e.campCreateID(t, "discount", "name", "Amanhã", "starts_at", e.campAt(24*time.Hour))
		noItems := e.campCreateID(t, "discount", "name", "Eletrônicos", "eligibility", map[string]any{"categories": []string{"eletronicos"}})

		v := e.campValidate(t, cust, "pdv", campCart(), false)
		require.Equal(t, campSorted("customer_id", "eligible_campaigns", "validation_token", "expires_at"), campKeys(v))
		require.Equal(t, cust, v["customer_id"])
		require.Regexp(t, `^vtk_[A-Za-z0-9_-]{43}$`, v["validation_token"])
		require.Equal(t, e.campAt(5*time.Minute), v["expires_at"], "valid five minutes")
		eligible := campEligible(t, v)
		require.Len(t, eligible, 4)
		for _, id := range []string{discount, cashback, bonus, gift} {
			require.Contains(t, eligible, id)
			require.Equal(t, campSorted("campaign_id", "name", "type", "description", "applicable_items", "estimated_benefit"), campKeys(eligible[id]))
		}

		d := eligible[discount]
		require.Equal(t, "Bebidas 10%", d["name"])
		require.Equal(t, "discount", d["type"])
		require.Equal(t, "Campanha de teste discount", d["description"])
		require.Equal(t, []any{"SKU-SUCO"}, d["applicable_items"])
		b := d["estimated_benefit"].(map[string]any)
		require.Equal(t, campSorted("amount", "discount_amount", "items"), campKeys(b))
		campRequireDec(t, "1.5", b["amount"], "amount")
		campRequireDec(t, "1.5", b["discount_amount"], "discount_amount")
		items := b["items"].([]any)
		require.Len(t, items, 1)
		it := items[0].(map[string]any)
		require.Equal(t, campSorted("sku", "quantity", "discount_amount", "bonus_points"), campKeys(it))
		require.Equal(t, "SKU-SUCO", it["sku"])
		campRequireDec(t, "3", it["quantity"], "quantity")
		campRequireDec(t, "1.5", it["discount_amount"], "item discount")
		require.Equal(t, json.Number("0"), it["bonus_points"])

		c := eligible[cashback]
		require.Equal(t, []any{"SKU-CAFE", "SKU-SUCO"}, c["applicable_items"])
		b = c["estimated_benefit"].(map[string]any)
		require.Equal(t, campSorted("amount", "cashback_amount", "credit_after_days", "items"), campKeys(b))
		campRequireDec(t, "15", b["amount"], "amount")
		campRequireDec(t, "15", b["cashback_amount"], "cashback_amount")
		require.Equal(t, json.Number("7"), b["credit_after_days"])
		items = b["items"].([]any)
		require.Len(t, items, 2)
		campRequireDec(t, "9.375", items[0].(map[string]any)["cashback_amount"], "cashback of the coffee (25/40 of 15)")
		campRequireDec(t, "5.625", items[1].(map[string]any)["cashback_amount"], "cashback of the juice (15/40 of 15)")
		campRequireDec(t, "0", items[0].(map[string]any)["discount_amount"], "no discount")

		bp := eligible[bonus]
		require.Equal(t, []any{"SKU-CAFE"}, bp["applicable_items"])
		b = bp["estimated_benefit"].(map[string]any)
		require.Equal(t, campSorted("amount", "bonus_points", "multiplier", "items"), campKeys(b))
		campRequireDec(t, "0", b["amount"], "amount of points")
		require.Equal(t, json.Number("25"), b["bonus_points"], "R$ 25 × 1 point × (2 − 1)")
		campRequireDec(t, "2", b["multiplier"], "multiplier")
		require.Equal(t, json.Number("25"), b["items"].([]any)[0].(map[string]any)["bonus_points"])

		g := eligible[gift]
		b = g["estimated_benefit"].(map[string]any)
		require.Equal(t, campSorted("amount", "gift_sku", "items"), campKeys(b))
		require.Equal(t, "BRINDE-1", b["gift_sku"])
		campRequireDec(t, "0", b["amount"], "amount of a gift")

		t.Run("free shipping at its channel", func(t *testing.T) {
			v := e.campValidate(t, cust, "ecommerce", campCart(), false)
			el := campEligible(t, v)
			require.Contains(t, el, shipping)
			require.NotContains(t, el, discount, "the discount is for pdv only")
			b := el[shipping]["estimated_benefit"].(map[string]any)
			require.Equal(t, true, b["free_shipping"])
			campRequireDec(t, "0", b["amount"], "amount")
		})

		t.Run("explain", func(t *testing.T) {
			v := e.campValidate(t, cust, "pdv", campCart(), true)
			require.Equal(t, campSorted("customer_id", "eligible_campaigns", "ineligible_campaigns", "validation_token", "expires_at"), campKeys(v))
			require.Len(t, v["eligible_campaigns"], 4)
			reasons := map[string]string{}
			for _, x := range v["ineligible_campaigns"].([]any) {
				m := x.(map[string]any)
				id := m["campaign_id"].(string)
				reasons[id] = m["reason"].(string)
				if id == minimum {
					require.Equal(t, campSorted("campaign_id", "name", "reason", "missing_amount"), campKeys(m))
					campRequireDec(t, "60", m["missing_amount"], "R$ 100 − R$ 40")
					require.Equal(t, "Acima de 100", m["name"])
				} else {
					require.Equal(t, campSorted("campaign_id", "name", "reason"), campKeys(m))
				}
			}
			require.Equal(t, map[string]string{
				shipping: "channel_mismatch", segment: "segment_mismatch", minimum: "min_subtotal_not_met",
				later: "not_active", noItems: "no_applicable_items",
			}, reasons)
		})

		t.Run("limit reached", func(t *testing.T) {
			limited := e.campCreateID(t, "gift", "name", "Um por cliente", "segment_id", vip, "limits", map[string]any{"per_customer": 1})
			tok := e.campTokenFor(t, cust)
			r := e.campRedeem(t, limited, campRedeemBody(cust, "order-limit", tok, "40.00"))
			require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
			v := e.campValidate(t, cust, "pdv", campCart(), true)
			require.NotContains(t, campEligible(t, v), limited)
			var reason string
			for _, x := range v["ineligible_campaigns"].([]any) {
				if m := x.(map[string]any); m["campaign_id"] == limited {
					reason = m["reason"].(string)
				}
			}
			require.Equal(t, "limit_reached", reason)
		})

		t.Run("nothing eligible is an empty list", func(t *testing.T) {
			stranger := e.campCustomer(t, "Davi Reis")
			v := e.campValidate(t, stranger, "totem", map[string]any{"items": []any{campItem("X", "livros", 1, "0.50")}}, true)
			require.Equal(t, []any{}, v["eligible_campaigns"])
			require.NotEmpty(t, v["validation_token"])
		})

		t.Run("the token is stored hashed", func(t *testing.T) {
			tok := e.campTokenFor(t, cust)
			count := func(v string) (n int) {
				require.NoError(t, db.SQL.QueryRow(`SELECT count(*) FROM validation_tokens WHERE token_hash = '`+v+`'`).Scan(&n))
				return n
			}
			sum := sha256.Sum256([]byte(tok))
			require.Zero(t, count(tok))
			require.Equal(t, 1, count(hex.EncodeToString(sum[:])))
		})

		t.Run("eligibility follows the clock, not the lifecycle job", func(t *testing.T) {
			brief := e.campCreateID(t, "discount", "name", "Uma hora", "ends_at", e.campAt(time.Hour))
			require.Contains(t, campEligible(t, e.campValidate(t, cust, "pdv", campCart(), false)), brief)
			e.clock.Advance(time.Hour)
			v := e.campValidate(t, cust, "pdv", campCart(), true)
			require.NotContains(t, campEligible(t, v), brief)
			e.clock.Advance(23 * time.Hour)
			v = e.campValidate(t, cust, "pdv", campCart(), true)
			require.Contains(t, campEligible(t, v), later, "started at its starts_at")
			for _, x := range v["ineligible_campaigns"].([]any) {
				if m := x.(map[string]any); m["campaign_id"] == later {
					t.Fatalf("%s is still ineligible: %v", later, m)
				}
			}
		})

		t.Run("unknown customer", func(t *testing.T) {
			r := e.campDo(t, http.MethodPost, "/v1/campaigns/validate", e.token, map[string]any{
				"customer_id": "cus_00000000000000000000000000", "channel": "pdv", "cart": campCart(),
			})
			campRequireError(t, r, http.StatusNotFound, "not_found", "")
		})

		t.Run("bad carts", func(t *testing.T) {
			for _, tc := range []struct {
				name    string
				body    any
				details []string
			}{
				{"no customer", map[string]any{"channel": "pdv", "cart": campCart()}, []string{"customer_id"}},
				{"no items", map[string]any{"customer_id": cust, "cart": map[string]any{"items": []any{}}}, []string{"cart.items"}},
				{"no cart", map[string]any{"customer_id": cust}, []string{"cart.items"}},
				{"zero quantity", map[string]any{"customer_id": cust, "cart": map[string]any{"items": []any{campItem("A", "x", 0, "1")}}}, []string{"cart.items[0].quantity"}},
				{"negative price", map[string]any{"customer_id": cust, "cart": map[string]any{"items": []any{campItem("A", "x", 1, "1"), campItem("B", "x", 1, "-1")}}}, []string{"cart.items[1].unit_price"}},
				{"no price", map[string]any{"customer_id": cust, "cart": map[string]any{"items": []any{map[string]any{"sku": "A", "quantity": 1}}}}, []string{"cart.items[0].unit_price"}},
				{"no sku", map[string]any{"customer_id": cust, "cart": map[string]any{"items": []any{campItem("", "x", 1, "1")}}}, []string{"cart.items[0].sku"}},
				{"negative subtotal", map[string]any{"customer_id": cust, "cart": map[string]any{"subtotal": -1, "items": []any{campItem("A", "x", 1, "1")}}}, []string{"cart.subtotal"}},
			} {
				t.Run(tc.name, func(t *testing.T) {
					r := e.campDo(t, http.MethodPost, "/v1/campaigns/validate", e.token, tc.body)
					campRequireError(t, r, http.StatusUnprocessableEntity, "validation_error", tc.details[0], tc.details...)
				})
			}
			r := e.campDo(t, http.MethodPost, "/v1/campaigns/validate", e.token, `{"customer_id": "`+cust+`", "cart": {"items": [{"sku": "A", "quantity": "1", "unit_price": 1}]}}`)
			require.Equal(t, http.StatusUnprocessableEntity, r.status, "%s", r.body)
			require.Equal(t, "validation_error", r.obj(t)["error"])
			r = e.campDo(t, http.MethodPost, "/v1/campaigns/validate", e.token, `{"customer_id": `)
			campRequireError(t, r, http.StatusBadRequest, "invalid_json", "")
		})
	})
}

// campRedemptionKeys are the keys of a redeem answer.
var campRedemptionKeys = campSorted("redemption_id", "campaign_id", "customer_id", "order_id", "benefit_applied", "redeemed_at")

func TestCampaignRedeem(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := campSetup(t, db)
		ana := e.campCustomer(t, "Ana Prado")
		bia := e.campCustomer(t, "Bia Rocha")
		discount := e.campCreateID(t, "discount", "name", "Dez por cento")
		gift := e.campCreateID(t, "gift", "name", "Brinde")

		t.Run("201 with the benefit applied", func(t *testing.T) {
			tok := e.campTokenFor(t, ana)
			e.clock.Advance(time.Minute)
			r := e.campRedeem(t, discount, campRedeemBody(ana, "order-1", tok, "36.00"))
			require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
			require.Equal(t, "application/json", r.header.Get("Content-Type"))
			require.Empty(t, r.header.Get("Idempotent-Replayed"))
			m := r.obj(t)
			require.Equal(t, campRedemptionKeys, campKeys(m))
			require.Regexp(t, `^red_[0-9a-z]{26}$`, m["redemption_id"])
			require.Equal(t, discount, m["campaign_id"])
			require.Equal(t, ana, m["customer_id"])
			require.Equal(t, "order-1", m["order_id"])
			require.Equal(t, e.campAt(0), m["redeemed_at"])
			b := m["benefit_applied"].(map[string]any)
			require.Equal(t, campSorted("type", "amount", "discount_amount", "items"), campKeys(b))
			require.Equal(t, "discount", b["type"])
			campRequireDec(t, "4", b["amount"], "10% of R$ 40")
			campRequireDec(t, "4", b["discount_amount"], "discount_amount")
			require.Len(t, b["items"], 2)

			red, err := e.db.Ent.Redemption.Get(e.ctx, m["redemption_id"].(string))
			require.NoError(t, err)
			require.True(t, red.AmountPaid.Equal(decimal.NewFromInt(36)))
			require.True(t, red.DiscountAmount.Equal(decimal.NewFromInt(4)))
			c, err := e.db.Ent.Campaign.Get(e.ctx, discount)
			require.NoError(t, err)
			require.Equal(t, 1, c.RedemptionsCount)

			// The same validation, order and campaign again.
			r = e.campRedeem(t, discount, campRedeemBody(ana, "order-1", tok, "36.00"))
			campRequireError(t, r, http.StatusConflict, "already_redeemed", "campaign_id")
			// The same order may take the token's other campaign ...
			r = e.campRedeem(t, gift, campRedeemBody(ana, "order-1", tok, "36.00"))
			require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
			require.Equal(t, "BRINDE-1", r.obj(t)["benefit_applied"].(map[string]any)["gift_sku"])
			// ... another order may not.
			r = e.campRedeem(t, gift, campRedeemBody(ana, "order-2", tok, "36.00"))
			campRequireError(t, r, http.StatusUnprocessableEntity, "validation_token_used", "validation_token")
		})

		t.Run("token refusals", func(t *testing.T) {
			tok := e.campTokenFor(t, ana)
			r := e.campRedeem(t, discount, campRedeemBody(ana, "order-x", "vtk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "10"))
			campRequireError(t, r, http.StatusUnprocessableEntity, "validation_error", "validation_token", "validation_token")
			r = e.campRedeem(t, discount, campRedeemBody(bia, "order-x", tok, "10"))
			campRequireError(t, r, http.StatusUnprocessableEntity, "validation_error", "customer_id", "customer_id")
			later := e.campCreateID(t, "discount", "name", "Depois do token")
			r = e.campRedeem(t, later, campRedeemBody(ana, "order-x", tok, "10"))
			campRequireError(t, r, http.StatusUnprocessableEntity, "campaign_not_eligible", "campaign_id")
			r = e.campRedeem(t, "cmp_00000000000000000000000000", campRedeemBody(ana, "order-x", tok, "10"))
			campRequireError(t, r, http.StatusUnprocessableEntity, "campaign_not_eligible", "campaign_id")

			r = e.campRedeem(t, discount, campRedeemBody(ana, "order-3", tok, "10"))
			require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
			r = e.campRedeem(t, gift, campRedeemBody(ana, "order-4", tok, "10"))
			campRequireError(t, r, http.StatusUnprocessableEntity, "validation_token_used", "validation_token")
			require.Zero(t, e.campRedemptionsOfOrder(t, "order-4"))

			// Another tenant cannot use the token, even knowing the ids.
			other, err := e.app.Backoffice.CreateTenant(campSys(), "Outra Loja", nil)
			require.NoError(t, err)
			oc, err := e.app.Backoffice.CreateClient(campSys(), other.ID, apiclient.KindOauth, "outra", nil)
			require.NoError(t, err)
			ot, err := e.app.Auth.IssueToken(context.Background(), auth.TokenRequest{GrantType: "client_credentials",
				ClientID: oc.Client.ID, ClientSecret: oc.Secret, Scope: campScopeWrite})
			require.NoError(t, err)
			tok2 := e.campTokenFor(t, ana)
			r = e.campDo(t, http.MethodPost, "/v1/campaigns/"+gift+"/redeem", ot.AccessToken, campRedeemBody(ana, "order-5", tok2, "10"))
			campRequireError(t, r, http.StatusUnprocessableEntity, "validation_error", "validation_token", "validation_token")
			require.Zero(t, e.campRedemptionsOfOrder(t, "order-5"))
		})

		t.Run("expired token", func(t *testing.T) {
			tok := e.campTokenFor(t, bia)
			e.clock.Advance(5*time.Minute - time.Second)
			tok2 := e.campTokenFor(t, bia)
			e.clock.Advance(time.Second)
			r := e.campRedeem(t, discount, campRedeemBody(bia, "order-late", tok, "10"))
			campRequireError(t, r, http.StatusUnprocessableEntity, "validation_token_expired", "validation_token")
			require.Zero(t, e.campRedemptionsOfOrder(t, "order-late"))
			r = e.campRedeem(t, discount, campRedeemBody(bia, "order-in-time", tok2, "10"))
			require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		})

		t.Run("limits", func(t *testing.T) {
			total := e.campCreateID(t, "gift", "name", "Só um", "limits", map[string]any{"total": 1})
			perCustomer := e.campCreateID(t, "gift", "name", "Um por cliente", "limits", map[string]any{"per_customer": 1})
			// Every token is taken before the limits are reached: validate
			// would not offer an exhausted campaign.
			tokA, tokA2, tokB := e.campTokenFor(t, ana), e.campTokenFor(t, ana), e.campTokenFor(t, bia)
			r := e.campRedeem(t, total, campRedeemBody(ana, "order-t1", tokA, "10"))
			require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
			r = e.campRedeem(t, total, campRedeemBody(bia, "order-t2", tokB, "10"))
			campRequireError(t, r, http.StatusConflict, "redemption_limit_reached", "limits.total")

			r = e.campRedeem(t, perCustomer, campRedeemBody(ana, "order-t1", tokA, "10"))
			require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
			r = e.campRedeem(t, perCustomer, campRedeemBody(ana, "order-p2", tokA2, "10"))
			campRequireError(t, r, http.StatusConflict, "redemption_limit_reached", "limits.per_customer")
			r = e.campRedeem(t, perCustomer, campRedeemBody(bia, "order-t2", tokB, "10"))
			require.Equal(t, http.StatusCreated, r.status, "another customer has a redemption of her own")
			require.Equal(t, 1, e.campRedemptions(t, total))
			require.Equal(t, 2, e.campRedemptions(t, perCustomer))
		})

		t.Run("ended campaign", func(t *testing.T) {
			short := e.campCreateID(t, "gift", "name", "Curta")
			tok := e.campTokenFor(t, bia)
			r := e.campDo(t, http.MethodDelete, "/v1/campaigns/"+short, e.token, nil)
			require.Equal(t, http.StatusOK, r.status)
			r = e.campRedeem(t, short, campRedeemBody(bia, "order-ended", tok, "10"))
			campRequireError(t, r, http.StatusUnprocessableEntity, "campaign_not_active", "campaign_id")
		})

		t.Run("Idempotency-Key", func(t *testing.T) {
			tok := e.campTokenFor(t, bia)
			body := campRedeemBody(bia, "order-idem", tok, "40.00")
			first := e.campRedeem(t, discount, body, "Idempotency-Key", "key-1")
			require.Equal(t, http.StatusCreated, first.status, "%s", first.body)
			require.Empty(t, first.header.Get("Idempotent-Replayed"))
			again := e.campRedeem(t, discount, body, "Idempotency-Key", "key-1")
			require.Equal(t, http.StatusCreated, again.status, "%s", again.body)
			require.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
			require.Equal(t, "application/json", again.header.Get("Content-Type"))
			require.Equal(t, string(first.body), string(again.body))
			require.Equal(t, 1, e.campRedemptionsOfOrder(t, "order-idem"))

			other := campRedeemBody(bia, "order-idem-2", tok, "40.00")
			r := e.campRedeem(t, discount, other, "Idempotency-Key", "key-1")
			campRequireError(t, r, http.StatusUnprocessableEntity, "idempotency_key_reused", "Idempotency-Key")
			r = e.campRedeem(t, gift, body, "Idempotency-Key", "key-1")
			campRequireError(t, r, http.StatusUnprocessableEntity, "idempotency_key_reused", "Idempotency-Key")

			// Without the key a retry is refused, not replayed.
			r = e.campRedeem(t, discount, body)
			campRequireError(t, r, http.StatusConflict, "already_redeemed", "campaign_id")

			// Keys belong to the client: another client's same key is new.
			otherClient, err := e.app.Backoffice.CreateClient(campSys(), e.tenantID, apiclient.KindOauth, "outro caixa", nil)
			require.NoError(t, err)
			tk, err := e.app.Auth.IssueToken(context.Background(), auth.TokenRequest{GrantType: "client_credentials",
				ClientID: otherClient.Client.ID, ClientSecret: otherClient.Secret, Scope: campScopeWrite})
			require.NoError(t, err)
			r = e.campDo(t, http.MethodPost, "/v1/campaigns/"+gift+"/redeem", tk.AccessToken, body, "Idempotency-Key", "key-1")
			require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
			require.Empty(t, r.header.Get("Idempotent-Replayed"))

			r = e.campRedeem(t, discount, body, "Idempotency-Key", strings.Repeat("k", 256))
			campRequireError(t, r, http.StatusUnprocessableEntity, "validation_error", "Idempotency-Key", "Idempotency-Key")
		})

		t.Run("bad bodies", func(t *testing.T) {
			r := e.campRedeem(t, discount, map[string]any{"amount_paid": 10})
			campRequireError(t, r, http.StatusUnprocessableEntity, "validation_error", "customer_id", "customer_id", "order_id", "validation_token")
			r = e.campRedeem(t, discount, map[string]any{"customer_id": ana, "order_id": "o", "validation_token": "vtk_x"})
			campRequireError(t, r, http.StatusUnprocessableEntity, "validation_error", "amount_paid", "amount_paid")
			r = e.campRedeem(t, discount, campRedeemBody(ana, "o", "vtk_x", "-1"))
			campRequireError(t, r, http.StatusUnprocessableEntity, "validation_error", "amount_paid", "amount_paid")
			r = e.campRedeem(t, discount, campRedeemBody(ana, "o", "vtk_x", "1.001"))
			campRequireError(t, r, http.StatusUnprocessableEntity, "validation_error", "amount_paid", "amount_paid")
			r = e.campRedeem(t, discount, `{"customer_id": 1}`)
			campRequireError(t, r, http.StatusUnprocessableEntity, "validation_error", "customer_id", "customer_id")
			r = e.campRedeem(t, discount, `{`)
			campRequireError(t, r, http.StatusBadRequest, "invalid_json", "")
		})
	})
}

// campRedemptionsOfOrder counts the redemptions of an order.
func (e *campEnv) campRedemptionsOfOrder(t *testing.T, orderID string) int {
	t.Helper()
	n, err := e.db.Ent.Redemption.Query().Where(redemption.OrderID(orderID)).Count(e.ctx)
	require.NoError(t, err)
	return n
}

// TestCampaignRedeemIdempotentConcurrent: 50 redeems with one
// Idempotency-Key and one body at once give one redemption; every answer
// is the 201 (the first, or replayed with the identical body) or a 409.
func TestCampaignRedeemIdempotentConcurrent(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		const n = 50
		e := campSetup(t, db)
		cust := e.campCustomer(t, "Eva Melo")
		camp := e.campCreateID(t, "cashback", "discount", map[string]any{"mode": "percentage", "value": 10, "credit_after_days": 0})
		tok := e.campTokenFor(t, cust)
		raw, err := json.Marshal(campRedeemBody(cust, "order-concurrent", tok, "40.00"))
		require.NoError(t, err)

		var ready, done sync.WaitGroup
		start := make(chan struct{})
		answers := make([]campResp, n)
		for i := range n {
			ready.Add(1)
			done.Add(1)
			go func() {
				defer done.Done()
				req, err := http.NewRequest(http.MethodPost, e.srv.URL+"/v1/campaigns/"+camp+"/redeem", bytes.NewReader(raw))
				if err != nil {
					panic(err)
				}
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+e.token)
				req.Header.Set("Idempotency-Key", "caixa-7-venda-1")
				ready.Done()
				<-start
				res, err := e.srv.Client().Do(req)
				if err != nil {
					answers[i] = campResp{status: -1, body: []byte(err.Error())}
					return
				}
				defer res.Body.Close()
				b, _ := io.ReadAll(res.Body)
				answers[i] = campResp{status: res.StatusCode, header: res.Header, body: b}
			}()
		}
		ready.Wait()
		began := time.Now()
		close(start)
		done.Wait()
		t.Logf("%s: %d concurrent redeems with one Idempotency-Key in %v", db.Dialect, n, time.Since(began))

		var firsts, replays, conflicts int
		var body string
		for _, a := range answers {
			switch a.status {
			case http.StatusCreated:
				if body == "" {
					body = string(a.body)
				}
				require.Equal(t, body, string(a.body), "every 201 carries the same body")
				if a.header.Get("Idempotent-Replayed") == "true" {
					replays++
				} else {
					firsts++
				}
			case http.StatusConflict:
				conflicts++
			default:
				t.Fatalf("answer %d: %s", a.status, a.body)
			}
		}
		t.Logf("%s: %d first, %d replayed, %d conflicts", db.Dialect, firsts, replays, conflicts)
		require.Equal(t, 1, firsts, "one request redeemed")
		require.Equal(t, n, firsts+replays+conflicts)
		require.Equal(t, 1, e.campRedemptions(t, camp))
		c, err := e.db.Ent.Campaign.Get(e.ctx, camp)
		require.NoError(t, err)
		require.Equal(t, 1, c.RedemptionsCount)
		keys, err := e.db.Ent.IdempotencyKey.Query().Count(e.ctx)
		require.NoError(t, err)
		require.Equal(t, 1, keys)
		var jobs int
		require.NoError(t, db.SQL.QueryRow(`SELECT count(*) FROM river_job WHERE kind = 'credit_cashback'`).Scan(&jobs))
		require.Equal(t, 1, jobs, "one cashback job")
	})
}

// TestCampaignScopes: reads need campaigns:read (validate too); writes,
// deactivation and redeem need campaigns:write.
func TestCampaignScopes(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := campSetup(t, db)
		cust := e.campCustomer(t, "Fábio Nunes")
		id := e.campCreateID(t, "discount")
		tok := e.campTokenFor(t, cust)
		read := e.tokenFor(t, campScopeRead)
		write := e.tokenFor(t, campScopeWrite)
		unrelated := e.tokenFor(t, "customers:read", "customers:write", "loyalty:read", "loyalty:write")
		calls := []struct {
			method, path string
			body         any
			scope        string
			ok           int
		}{
			{http.MethodGet, "/v1/campaigns", nil, campScopeRead, http.StatusOK},
			{http.MethodGet, "/v1/campaigns/" + id, nil, campScopeRead, http.StatusOK},
			{http.MethodPost, "/v1/campaigns/validate", map[string]any{"customer_id": cust, "channel": "pdv", "cart": campCart()}, campScopeRead, http.StatusOK},
			{http.MethodPost, "/v1/campaigns", e.campBody("gift"), campScopeWrite, http.StatusCreated},
			{http.MethodPost, "/v1/campaigns/" + id + "/redeem", campRedeemBody(cust, "order-s", tok, "10"), campScopeWrite, http.StatusCreated},
			{http.MethodDelete, "/v1/campaigns/" + id, nil, campScopeWrite, http.StatusOK},
		}
		for _, c := range calls {
			t.Run(c.method+" "+c.path, func(t *testing.T) {
				wrong := read
				if c.scope == campScopeRead {
					wrong = write
				}
				for _, token := range []string{wrong, unrelated} {
					r := e.campDo(t, c.method, c.path, token, c.body)
					m := campRequireError(t, r, http.StatusForbidden, "insufficient_scope", "")
					require.Contains(t, m["error_description"], c.scope)
					require.Contains(t, r.header.Get("WWW-Authenticate"), `scope="`+c.scope+`"`)
				}
				r := e.campDo(t, c.method, c.path, "", c.body)
				require.Equal(t, http.StatusUnauthorized, r.status)
				r = e.campDo(t, c.method, c.path, e.tokenFor(t, c.scope), c.body)
				require.Equal(t, c.ok, r.status, "%s", r.body)
			})
		}
		require.Equal(t, 1, e.campRedemptions(t, id), "the refused redeems wrote nothing")
	})
}

// TestCampaignPointOfSaleFlow is flow 1 of the document: validate, redeem
// after payment, then credit the order's points with only customer_id and
// order_id; a bonus_points campaign adds its points.
func TestCampaignPointOfSaleFlow(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := campSetup(t, db)
		cust := e.campCustomer(t, "Gabi Torres")
		discount := e.campCreateID(t, "discount", "name", "Dez por cento", "channels", []string{"pdv"})
		bonus := e.campCreateID(t, "bonus_points", "name", "Pontos em dobro", "discount", map[string]any{"multiplier": 3})

		v := e.campValidate(t, cust, "pdv", campCart(), false)
		el := campEligible(t, v)
		require.Contains(t, el, discount)
		require.Contains(t, el, bonus)
		require.Equal(t, json.Number("80"), el[bonus]["estimated_benefit"].(map[string]any)["bonus_points"], "R$ 40 × (3 − 1)")
		tok := v["validation_token"].(string)

		// The operator charges R$ 36.00 (R$ 40 less the 10%), then redeems both.
		r := e.campRedeem(t, discount, campRedeemBody(cust, "venda-1001", tok, "36.00"), "Idempotency-Key", "venda-1001-discount")
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		r = e.campRedeem(t, bonus, campRedeemBody(cust, "venda-1001", tok, "36.00"), "Idempotency-Key", "venda-1001-bonus")
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		b := r.obj(t)["benefit_applied"].(map[string]any)
		require.Equal(t, "bonus_points", b["type"])
		require.Equal(t, json.Number("80"), b["bonus_points"])
		bal := e.campBalance(t, cust)
		require.EqualValues(t, 0, bal, "bonus points wait for the order's credit")

		r = e.campDo(t, http.MethodPost, "/points/credit", e.token, map[string]any{"customer_id": cust, "order_id": "venda-1001"})
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		m := r.obj(t)
		require.Equal(t, json.Number("36"), m["points_credited"], "amount_paid of the redemption at 1 point per R$")
		require.Equal(t, json.Number("36"), m["new_balance"])
		require.EqualValues(t, 36+80, e.campBalance(t, cust), "the order's points and the bonus")

		// Crediting the order again credits nothing more.
		r = e.campDo(t, http.MethodPost, "/points/credit", e.token, map[string]any{"customer_id": cust, "order_id": "venda-1001"})
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		require.Equal(t, "true", r.header.Get("Idempotent-Replayed"))
		require.EqualValues(t, 116, e.campBalance(t, cust))
		entries, err := e.db.Ent.PointsEntry.Query().Order(pointsentry.ByCreatedAt()).All(e.ctx)
		require.NoError(t, err)
		require.Len(t, entries, 2)
		kinds := []pointsentry.Kind{entries[0].Kind, entries[1].Kind}
		require.ElementsMatch(t, []pointsentry.Kind{pointsentry.KindCredit, pointsentry.KindBonus}, kinds)

		t.Run("order credited before the redeem", func(t *testing.T) {
			tok := e.campTokenFor(t, cust)
			r := e.campDo(t, http.MethodPost, "/points/credit", e.token, map[string]any{"customer_id": cust, "order_id": "venda-1002", "amount": 40})
			require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
			r = e.campRedeem(t, bonus, campRedeemBody(cust, "venda-1002", tok, "40.00"))
			require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
			require.EqualValues(t, 116+40+80, e.campBalance(t, cust), "the bonus is credited at the redeem")
		})

		t.Run("an order without redemption needs an amount", func(t *testing.T) {
			r := e.campDo(t, http.MethodPost, "/points/credit", e.token, map[string]any{"customer_id": cust, "order_id": "venda-sem-campanha"})
			campRequireError(t, r, http.StatusUnprocessableEntity, "validation_error", "amount", "amount")
		})
	})
}

// campBalance reads the points balance over HTTP.
func (e *campEnv) campBalance(t *testing.T, customerID string) int64 {
	t.Helper()
	r := e.campDo(t, http.MethodGet, "/points/balance/"+customerID, e.token, nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	return campInt(t, r.obj(t)["points_balance"])
}
