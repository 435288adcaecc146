package rest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/ent/redemption"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/testclock"
	"github.com/fideliza/fideliza/viewer"
)

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

// campDo sends body (see apiBody) with the headers given as pairs.
func (e *campEnv) campDo(t *testing.T, method, path, token string, body any, headers ...string) apiResp {
	t.Helper()
	return apiDo(t, e.srv, method, path, token, body, headers...)
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

// campCPF returns a fresh valid CPF.
func (e *campEnv) campCPF() string {
	e.mu.Lock()
	e.nextID++
	n := e.nextID
	e.mu.Unlock()
	return cpfCheck(fmt.Sprintf("%09d", 300000000+n*7919))
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

func (e *campEnv) campRedeem(t *testing.T, campaignID string, body any, headers ...string) apiResp {
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
