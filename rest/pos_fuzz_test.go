package rest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"entgo.io/ent/dialect"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// Fuzz targets of the three POS request decoders: each sends the fuzzed body
// through the real handler, with the credentials of a real POS client, over
// a SQLite database set up once per target (a tenant with pre-registration
// on, a store, a customer and pdv campaigns), and fails on a 5xx or a panic.
// The seed corpus is in testdata/fuzz/<Name>/; run one with
//
//	go test -run '^$' -fuzz FuzzIdentify -fuzztime 60s ./rest/

// posFuzzCustomer is the customer the seed bodies name.
const posFuzzCustomer = "52998224725"

func posFuzzEnv(f *testing.F) *posEnv {
	f.Helper()
	e := posNewEnv(f, storagetest.Open(f, dialect.SQLite), unlimitedRates)
	pre := true
	_, err := e.app.Backoffice.UpdateTenant(posSys(), e.tenantID, backoffice.TenantSettings{PreRegistration: &pre})
	require.NoError(f, err)
	e.posCustomer(f, posFuzzCustomer, posCust{name: "Ana Souza", email: "ana@example.com", phone: "+5511987654321",
		birth: "1990-05-17", level: customer.LevelGold})
	e.posCustomer(f, posCNPJAlfa, posCust{typ: customer.DocumentTypeCNPJ, name: "Mercado Exemplo"})
	e.posPercent(f, "Dez por cento no PDV", "10", []string{"pdv"})
	e.posPercent(f, "Um terço no feijão", "33.333", []string{"pdv"}, posGTINB)
	e.posCampaign(f, campaigns.CampaignInput{Name: "R$ 1,50 no PDV", Channels: []string{"pdv"},
		Discount: &campaigns.DiscountInput{Mode: "fixed_amount", Value: posDecPtr("1.50")}})
	e.posPercent(f, "Metade no e-commerce", "50", []string{"ecommerce"})
	return e
}

// posFuzz fuzzes the body of POST path.
func posFuzz(f *testing.F, path string, seeds ...any) {
	e := posFuzzEnv(f)
	for _, s := range seeds {
		raw, err := json.Marshal(s)
		require.NoError(f, err)
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, _ := e.posBuild(t, "", posReq{path: path, body: body})
		rec, mark := httptest.NewRecorder(), e.logs.Len()
		contractCheck(t, e.mux).ServeHTTP(rec, req) // a panic fails the input
		e.requireNothingPersonalLogged(t, mark, body)
		if rec.Code >= http.StatusInternalServerError {
			t.Fatalf("status %d for %q: %s\n%s", rec.Code, body, rec.Body.Bytes(), e.logs.String())
		}
		if !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("status %d with a body that is not JSON: %q", rec.Code, rec.Body.Bytes())
		}
		if rec.Code >= 400 && rec.Header().Get("Content-Type") != "application/problem+json" {
			t.Fatalf("status %d without a problem: %s", rec.Code, rec.Body.Bytes())
		}
	})
}

func FuzzIdentify(f *testing.F) {
	posFuzz(f, "/customers/identify",
		posIdentifyBody("sess-1", "529.982.247-25", "CPF"),
		posIdentifyBody("sess-2", "12.ABC.345/01DE-35", "CNPJ"))
}

func FuzzAuthorize(f *testing.F) {
	posFuzz(f, "/discounts/authorizations",
		posAuthorizeBody(map[string]any{"id": posFuzzCustomer, "type": "CPF"},
			posItem("1", posGTINA, "10.00", "2"), posItem("2", posGTINB, "3.99", "0.755"),
			posItem("3", posGTINC, "5", "1", "discounts", []any{posExternal("1.00", "4.00", "1")})))
}

func FuzzRegisterSale(f *testing.F) {
	posFuzz(f, "/sales",
		posSaleBody(posN("1"), map[string]any{"id": posFuzzCustomer, "type": "CPF"}),
		posSaleBody(posN("2"), nil))
}
