package rest_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/openapi/openapitest"
	"github.com/fideliza/fideliza/rest"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// TestContractDrift proves the contract check catches drift: the real
// handler serves through a wrapper that changes its responses the way a
// careless change to a handler would (a renamed field, an added field, an
// unmasked CPF, another status code, another content type), and the
// validator the test servers use must report each change, while the
// unchanged responses pass.
func TestContractDrift(t *testing.T) {
	t.Parallel()
	db := storagetest.Open(t, "sqlite3")
	log := testLogger(t)
	a := app.New(&app.Config{DB: db, Log: log})
	a.Auth = auth.NewService(db.Ent, "http://fideliza.test", testAudience)
	h := rest.NewHandler(a, log, rest.Config{})

	tn, err := a.Backoffice.CreateTenant(sys(), "Loja Contrato", nil)
	require.NoError(t, err)
	c, err := a.Backoffice.CreateClient(sys(), tn.ID, apiclient.KindOauth, "drift", []string{"customers:read", "customers:write"})
	require.NoError(t, err)
	tok, err := a.Auth.IssueToken(context.Background(), auth.TokenRequest{
		GrantType: "client_credentials", ClientID: c.Client.ID, ClientSecret: c.Secret,
	})
	require.NoError(t, err)
	cust, err := a.Customers.CreateCustomer(viewer.TenantContext(context.Background(), tn.ID), customers.CustomerInput{
		Name: opt.Of("Ana Souza"), Email: opt.Of("ana@example.com"), CPF: opt.Of("52998224725"),
	})
	require.NoError(t, err)

	getCustomer := func() *http.Request {
		req := httptest.NewRequest(http.MethodGet, "/v1/customers/"+cust.ID, nil)
		req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		return req
	}
	createCustomer := func() *http.Request {
		req := httptest.NewRequest(http.MethodPost, "/v1/customers",
			strings.NewReader(`{"name":"Bia Lima","email":"bia@example.com","cpf":"11144477735"}`))
		req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		req.Header.Set("Content-Type", "application/json")
		return req
	}
	posWithoutCredentials := func() *http.Request {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/tenants/"+tn.ID+"/customers/identify",
			strings.NewReader(`{"sessionId":"s1","customer":{"id":"52998224725","type":"CPF"}}`))
		req.Header.Set("Content-Type", "application/json")
		return req
	}

	for _, tc := range []struct {
		name    string
		request func() *http.Request
		status  int // the status the real handler answers
		drift   func(*driftedResponse)
		want    []string // what the report must say; none: no report
	}{{
		name: "no drift", request: getCustomer, status: http.StatusOK,
		drift: func(*driftedResponse) {},
	}, {
		name: "no drift on an error", request: posWithoutCredentials, status: http.StatusUnauthorized,
		drift: func(*driftedResponse) {},
	}, {
		name: "renamed field", request: getCustomer, status: http.StatusOK,
		drift: func(r *driftedResponse) { r.replace(`"points_balance":`, `"pointsBalance":`) },
		want:  []string{"getCustomer", `property "points_balance" is missing`, "pointsBalance"},
	}, {
		name: "added field", request: getCustomer, status: http.StatusOK,
		drift: func(r *driftedResponse) { r.replace(`"id":`, `"tenant_id":"x","id":`) },
		want:  []string{"getCustomer", "tenant_id"},
	}, {
		name: "unmasked CPF", request: getCustomer, status: http.StatusOK,
		drift: func(r *driftedResponse) { r.replace(`"cpf":"***.***.***-25"`, `"cpf":"52998224725"`) },
		want:  []string{"at /cpf", "regular expression"},
	}, {
		name: "wrong type", request: getCustomer, status: http.StatusOK,
		drift: func(r *driftedResponse) { r.replace(`"points_balance":0`, `"points_balance":"0"`) },
		want:  []string{"at /points_balance"},
	}, {
		name: "undocumented status", request: createCustomer, status: http.StatusCreated,
		drift: func(r *driftedResponse) { r.status = http.StatusOK },
		want:  []string{"createCustomer", "answered 200", "status is not supported"},
	}, {
		name: "problem as plain JSON", request: posWithoutCredentials, status: http.StatusUnauthorized,
		drift: func(r *driftedResponse) { r.header.Set("Content-Type", "application/json") },
		want:  []string{"identifyCustomer", "answered 401 application/json", "application/json"},
	}, {
		name: "missing required header", request: posWithoutCredentials, status: http.StatusUnauthorized,
		drift: func(r *driftedResponse) { r.header.Del("WWW-Authenticate") },
		want:  []string{`response header "WWW-Authenticate" missing`},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			reports := &reportRecorder{}
			var served int
			srv := openapitest.Middleware(reports, drifting(h, tc.drift, &served))
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, tc.request())
			require.Equal(t, tc.status, served, "the handler itself: %s", rec.Body)
			if len(tc.want) == 0 {
				require.Empty(t, reports.all(), "an unchanged response must pass")
				return
			}
			require.Len(t, reports.all(), 1, "the drift must be reported once")
			t.Log(reports.all()[0])
			for _, want := range tc.want {
				require.Contains(t, reports.all()[0], want)
			}
		})
	}
}

// driftedResponse is a response the drift may change before it is sent.
type driftedResponse struct {
	status int
	header http.Header
	body   []byte
}

func (r *driftedResponse) replace(old, with string) {
	r.body = bytes.Replace(r.body, []byte(old), []byte(with), 1)
}

// drifting serves h and lets drift change the response on its way out;
// served is the status h answered.
func drifting(h http.Handler, drift func(*driftedResponse), served *int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		*served = rec.Code
		r := &driftedResponse{status: rec.Code, header: rec.Header().Clone(), body: rec.Body.Bytes()}
		drift(r)
		for k, v := range r.header {
			w.Header()[k] = v
		}
		w.WriteHeader(r.status)
		_, _ = w.Write(r.body)
	})
}

// reportRecorder is an openapitest.Reporter that keeps the reports instead
// of failing the test.
type reportRecorder struct {
	mu      sync.Mutex
	reports []string
}

func (r *reportRecorder) Helper() {}

func (r *reportRecorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reports = append(r.reports, fmt.Sprintf(format, args...))
}

func (r *reportRecorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.reports...)
}
