package rest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"entgo.io/ent/dialect"

	"github.com/fideliza/fideliza/storage/storagetest"
)

// Fuzz targets of the /v1 and GraphQL decoders, beside the POS ones
// (pos_fuzz_test.go): each sends the fuzzed input through the real handler
// with a token holding every scope, over a SQLite database set up once, and
// fails on a 5xx, a panic or an error body of the wrong shape. Seeds are in
// testdata/fuzz/<Name>/; run one with
//
//	go test -run '^$' -fuzz FuzzV1Bodies -fuzztime 60s ./rest/

const fuzzScopes = "customers:read customers:write campaigns:read campaigns:write loyalty:read loyalty:write webhooks:read webhooks:write"

// v1FuzzPaths are the /v1 operations whose bodies are fuzzed; the fuzzer
// picks one by index.
var v1FuzzPaths = []struct{ method, path string }{
	{"POST", "/v1/customers"},
	{"PATCH", "/v1/customers/cus_missing"},
	{"POST", "/v1/campaigns"},
	{"POST", "/v1/campaigns/validate"},
	{"POST", "/v1/campaigns/cmp_missing/redeem"},
	{"POST", "/v1/points/credit"},
	{"POST", "/v1/points/debit"},
	{"POST", "/v1/webhooks"},
	{"POST", "/v1/segments"},
	{"POST", "/v1/segments/preview"},
}

func FuzzV1Bodies(f *testing.F) {
	s := newScopeServer(f, storagetest.Open(f, dialect.SQLite), unlimitedRates)
	h, token := s.routes.(http.Handler), s.tokenFor(f, fuzzScopes)
	seeds := []string{
		`{"name":"Ana Souza","email":"ana@example.com","cpf":"529.982.247-25","address":{"city":"Recife"}}`,
		`{"name":"Ana","marketing_consent":{"email":true}}`,
		`{"name":"Dez","type":"discount","starts_at":"2030-01-01T00:00:00-03:00","ends_at":"2030-02-01T00:00:00-03:00","discount":{"mode":"percentage","value":10},"eligibility":{"min_subtotal":50}}`,
		`{"customer_id":"cus_x","items":[{"sku":"A","quantity":1,"unit_price":9.99}]}`,
		`{"customer_id":"cus_x","order_id":"o-1","validation_token":"vt","amount_paid":1e308}`,
		`{"customer_id":"cus_x","order_id":"o-1","amount":123.45}`,
		`{"customer_id":"cus_x","points":10}`,
		`{"url":"https://hooks.example.invalid/x","event_types":["sale.processed"]}`,
		`{"name":"Gold","rule":"level == \"gold\" && purchases > 2"}`,
		`{"rule":"days_since_last_purchase > 90 || \"norte\" in group_purchases"}`,
	}
	for i, b := range seeds {
		f.Add(uint8(i), []byte(b))
	}
	f.Fuzz(func(t *testing.T, pick uint8, body []byte) {
		p := v1FuzzPaths[int(pick)%len(v1FuzzPaths)]
		req := httptest.NewRequest(p.method, p.path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		rec, mark := httptest.NewRecorder(), s.logs.Len()
		contractCheck(t, h).ServeHTTP(rec, req) // a panic fails the input
		requireV1Answer(t, rec, body)
		s.requireNothingPersonalLogged(t, mark, body)
	})
}

// requireV1Answer fails on a 5xx and on an error without the /v1 body.
func requireV1Answer(t *testing.T, rec *httptest.ResponseRecorder, input []byte) {
	t.Helper()
	if rec.Code >= http.StatusInternalServerError {
		t.Fatalf("status %d for %q: %s", rec.Code, input, rec.Body.Bytes())
	}
	var body map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("status %d with a body that is not a JSON object: %q", rec.Code, rec.Body.Bytes())
	}
	if rec.Code >= 400 && body["error"] == nil {
		t.Fatalf("status %d without an error code: %s", rec.Code, rec.Body.Bytes())
	}
}

// graphqlFuzzDocuments are the operations whose variables are fuzzed.
var graphqlFuzzDocuments = []string{
	`mutation($in: CreateCustomerInput!) { createCustomer(input: $in) { id } }`,
	`mutation($in: CreditPointsInput!) { creditPoints(input: $in) { replayed } }`,
	`mutation($in: ValidateCartInput!) { validateCart(input: $in) { validationToken } }`,
	`mutation($in: CreateCampaignInput!) { createCampaign(input: $in) { id } }`,
	`query($s: String, $n: Int) { customerSearch(search: $s, first: $n) { totalCount } }`,
}

func FuzzGraphQLVariables(f *testing.F) {
	s := newScopeServer(f, storagetest.Open(f, dialect.SQLite), unlimitedRates)
	h, token := s.routes.(http.Handler), s.tokenFor(f, fuzzScopes)
	seeds := []string{
		`{"in":{"name":"Ana","email":"ana@example.com","cpf":"529.982.247-25"}}`,
		`{"in":{"customerID":"cus_x","orderID":"o-1","amount":"10.50"}}`,
		`{"in":{"customerID":"cus_x","items":[{"sku":"A","quantity":"1","unitPrice":"9.99"}]}}`,
		`{"in":{"name":"Dez","type":"discount","startsAt":"2030-01-01T00:00:00Z","endsAt":"2030-02-01T00:00:00Z","discountMode":"percentage","discountValue":"10"}}`,
		`{"s":"ana","n":5}`,
	}
	for i, v := range seeds {
		f.Add(uint8(i), []byte(v))
	}
	f.Fuzz(func(t *testing.T, pick uint8, variables []byte) {
		if !json.Valid(variables) {
			variables = []byte(`"` + string(bytes.ReplaceAll(variables, []byte(`"`), nil)) + `"`)
		}
		doc, err := json.Marshal(graphqlFuzzDocuments[int(pick)%len(graphqlFuzzDocuments)])
		if err != nil {
			t.Fatal(err)
		}
		body := []byte(`{"query":` + string(doc) + `,"variables":` + string(variables) + `}`)
		req := httptest.NewRequest("POST", "/graphql", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		rec, mark := httptest.NewRecorder(), s.logs.Len()
		h.ServeHTTP(rec, req)
		s.requireNothingPersonalLogged(t, mark, body)
		if rec.Code >= http.StatusInternalServerError {
			t.Fatalf("status %d for %s: %s", rec.Code, body, rec.Body.Bytes())
		}
		var answer struct {
			Errors []struct {
				Extensions map[string]any `json:"extensions"`
			} `json:"errors"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil {
			t.Fatalf("status %d with a body that is not JSON: %q", rec.Code, rec.Body.Bytes())
		}
		for _, e := range answer.Errors {
			if e.Extensions["code"] == "internal_error" {
				t.Fatalf("internal error for %s: %s", body, rec.Body.Bytes())
			}
		}
	})
}
