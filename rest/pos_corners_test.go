package rest

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/auth/authtest"
	"github.com/fideliza/fideliza/ent/sale"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// TestPOSSaleInfersCustomerType: the document makes a sale's customer.type
// optional; left out, it is inferred from the id (11 digits a CPF, 14
// characters a CNPJ), answered in the 202 and stored. Before, such a sale
// was a 400 that the point of sale does not retry: the sale was lost.
func TestPOSSaleInfersCustomerType(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db)
		cpf := posCPF()
		cases := []struct {
			name, receipt string
			cust          map[string]any
			wantID        string
			wantType      any
		}{
			{"CPF bare", "9101", map[string]any{"id": cpf}, cpf, "CPF"},
			{"CPF in its mask", "9102", map[string]any{"id": posFormatCPF(cpf)}, cpf, "CPF"},
			{"CPF with a null type", "9103", map[string]any{"id": cpf, "type": nil}, cpf, "CPF"},
			{"CPF with an empty type", "9104", map[string]any{"id": cpf, "type": ""}, cpf, "CPF"},
			{"numeric CNPJ", "9105", map[string]any{"id": "11.222.333/0001-81"}, "11222333000181", "CNPJ"},
			{"alphanumeric CNPJ", "9106", map[string]any{"id": posCNPJAlfa}, posCNPJAlfa, "CNPJ"},
			{"no customer", "9107", nil, posDefault, nil},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				var cust any
				if c.cust != nil {
					cust = c.cust
				}
				posRequireAccepted(t, e.posPost(t, "/sales", posSaleBody(posN(c.receipt), cust)), c.receipt,
					map[string]any{"id": c.wantID, "type": c.wantType})
				stored := e.db.Ent.Sale.Query().Where(sale.ExternalID(c.receipt)).OnlyX(posSys())
				require.Equal(t, c.wantID, stored.CustomerDocument)
				if c.wantType == nil {
					require.Nil(t, stored.CustomerDocumentType)
				} else {
					require.Equal(t, c.wantType, string(*stored.CustomerDocumentType))
				}
			})
		}
		refused := []struct {
			name string
			id   string
		}{
			{"CPF with a wrong check digit", cpf[:10] + strconv.Itoa((int(cpf[10]-'0')+1)%10)},
			{"12 digits", "123456789012"},
			{"CNPJ with a wrong check digit", "11.222.333/0001-80"},
			{"letters in 11 characters", "5299822472A"},
		}
		for i, c := range refused {
			t.Run(c.name, func(t *testing.T) {
				receipt := posN(strconv.Itoa(9200 + i))
				posRequireProblem(t, e.posPost(t, "/sales", posSaleBody(receipt, map[string]any{"id": c.id})),
					http.StatusBadRequest, "validation-error", "customer.id")
			})
		}
	})
}

// TestPOSSaleStoresItsPeople: a sale keeps the register, operator and
// salesperson its point of sale sent, and the back office filters sales
// by them.
func TestPOSSaleStoresItsPeople(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		idp := authtest.NewProvider(t)
		e := posSetup(t, db, func(s *ServerSetup) {
			require.NoError(t, s.Auth.UseOIDC(context.Background(), auth.OIDCConfig{Issuer: idp.URL, Audience: "fideliza-people-test"}))
		})
		for _, sent := range [][2]string{{"9301", "V-3"}, {"9302", "V-9"}} {
			receipt, seller := sent[0], sent[1]
			body := posSet(posSaleBody(posN(receipt), nil), "sale.store.sellerId", seller)
			posRequireAccepted(t, e.posPost(t, "/sales", body), receipt, map[string]any{"id": posDefault, "type": nil})
		}
		bare := posDelete(posDelete(posSaleBody(posN("9303"), nil), "sale.store.employeeId"), "sale.store.sellerId")
		posRequireAccepted(t, e.posPost(t, "/sales", bare), "9303", map[string]any{"id": posDefault, "type": nil})

		token := idp.Sign(t, map[string]any{
			"iss": idp.URL, "sub": "analyst@loja.example", "aud": "fideliza-people-test",
			"iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix(),
			"tenant_id": e.tenantID, "role": string(viewer.RoleAnalyst),
		})
		query := func(where string) []map[string]any {
			t.Helper()
			body, err := json.Marshal(map[string]any{"query": `{ sales(where: ` + where + `, orderBy: {field: CREATED_AT}) {
				edges { node { externalID posID employeeID sellerID store { code } } } } }`})
			require.NoError(t, err)
			status, raw := rawGraphQL(t, e.TestEnv, token, "application/json", string(body))
			require.Equal(t, http.StatusOK, status, raw)
			var a struct {
				Data struct {
					Sales struct {
						Edges []struct {
							Node map[string]any `json:"node"`
						} `json:"edges"`
					} `json:"sales"`
				} `json:"data"`
				Errors []any `json:"errors"`
			}
			require.NoError(t, json.Unmarshal([]byte(raw), &a))
			require.Empty(t, a.Errors, raw)
			var nodes []map[string]any
			for _, edge := range a.Data.Sales.Edges {
				nodes = append(nodes, edge.Node)
			}
			return nodes
		}
		store := map[string]any{"code": posStore}
		require.Equal(t, []map[string]any{
			{"externalID": "9302", "posID": "PDV-01", "employeeID": "OP-7", "sellerID": "V-9", "store": store},
		}, query(`{sellerID: "V-9"}`))
		require.Equal(t, []map[string]any{
			{"externalID": "9301", "posID": "PDV-01", "employeeID": "OP-7", "sellerID": "V-3", "store": store},
			{"externalID": "9302", "posID": "PDV-01", "employeeID": "OP-7", "sellerID": "V-9", "store": store},
		}, query(`{employeeID: "OP-7"}`))
		require.Equal(t, []map[string]any{
			{"externalID": "9303", "posID": "PDV-01", "employeeID": "", "sellerID": "", "store": store},
		}, query(`{sellerID: ""}`), "left out: stored empty")
	})
}

// TestPOSProtocol: protocol is optional on identify and authorize and must
// then be PARTNER; a sale's must be PARTNER_V1. Another value is another
// version of the interface, whose fields would be misread: 400.
func TestPOSProtocol(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db)
		doc := posCPF()
		e.posCustomer(t, doc, posCust{name: "Ana Souza"})
		identify := func(protocol any) map[string]any {
			b := posIdentifyBody("sess-1", doc, "CPF")
			if protocol == nil {
				return posDelete(b, "protocol")
			}
			return posSet(b, "protocol", protocol)
		}
		authorize := func(protocol any) map[string]any {
			b := posAuthorizeBody(map[string]any{"id": doc, "type": "CPF"}, posItem("1", posGTINA, "10.00", "1"))
			if protocol == nil {
				return posDelete(b, "protocol")
			}
			return posSet(b, "protocol", protocol)
		}
		sale := func(protocol any) map[string]any {
			b := posSaleBody(posN("9401"), nil)
			if protocol == nil {
				return posDelete(b, "protocol")
			}
			return posSet(b, "protocol", protocol)
		}
		cases := []struct {
			name, path string
			body       map[string]any
			status     int
		}{
			{"identify PARTNER", "/customers/identify", identify("PARTNER"), http.StatusOK},
			{"identify without", "/customers/identify", identify(nil), http.StatusOK},
			{"identify PARTNER_V1", "/customers/identify", identify("PARTNER_V1"), http.StatusBadRequest},
			{"identify lower case", "/customers/identify", identify("partner"), http.StatusBadRequest},
			{"authorize PARTNER", "/discounts/authorizations", authorize("PARTNER"), http.StatusOK},
			{"authorize without", "/discounts/authorizations", authorize(nil), http.StatusOK},
			{"authorize PARTNER_V2", "/discounts/authorizations", authorize("PARTNER_V2"), http.StatusBadRequest},
			{"sale PARTNER", "/sales", sale("PARTNER"), http.StatusBadRequest},
			{"sale without", "/sales", sale(nil), http.StatusBadRequest},
			{"sale PARTNER_V1", "/sales", sale("PARTNER_V1"), http.StatusAccepted},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				r := e.posPost(t, c.path, c.body)
				if c.status == http.StatusBadRequest {
					posRequireProblem(t, r, c.status, "validation-error", "protocol")
					return
				}
				require.Equal(t, c.status, r.status, "%s", r.body)
			})
		}
	})
}

// TestPOSDatabaseFailureIsUnavailable: a database that fails under an
// operation is 503 service-unavailable, which the point of sale retries
// with backoff (as the document says for authorize), never a 500; /v1
// answers 503 service_unavailable. The cause is logged, not shown.
func TestPOSDatabaseFailureIsUnavailable(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db)
		doc := posCPF()
		e.posCustomer(t, doc, posCust{name: "Ana Souza"})
		authorize := posAuthorizeBody(map[string]any{"id": doc, "type": "CPF"}, posItem("1", posGTINA, "10.00", "1"))
		// Warm the caches (login, tenant settings): the failure then comes
		// from inside the operation.
		require.Equal(t, http.StatusOK, e.posPost(t, "/discounts/authorizations", authorize).status)
		require.Equal(t, http.StatusOK, e.posPost(t, "/customers/identify", posIdentifyBody("s", doc, "CPF")).status)

		require.NoError(t, e.db.Close()) // the database goes away
		mark := e.logs.Len()
		for _, q := range []struct {
			path string
			body map[string]any
		}{
			{"/discounts/authorizations", authorize},
			{"/customers/identify", posIdentifyBody("s", doc, "CPF")},
			{"/sales", posSaleBody(posN("9501"), map[string]any{"id": doc, "type": "CPF"})},
		} {
			m := posRequireProblem(t, e.posPost(t, q.path, q.body), http.StatusServiceUnavailable, "service-unavailable")
			require.NotContains(t, m["detail"], "sql", "the cause is not shown")
		}
		require.Contains(t, e.logs.Since(mark), "database is closed", "the cause is logged")
		require.NotContains(t, e.logs.Since(mark), `"status":500`)
	})
}

// TestV1RenamedDiscountValue: discount_value, the 1.0.0 name of a
// campaign's discount.value, is refused with a 422 that names the rename
// instead of being ignored (a campaign created without its percentage).
func TestV1RenamedDiscountValue(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := NewTestEnv(t, db)
		token := e.tokenFor(t, "campaigns:write")
		campaign := func(discount map[string]any, top ...any) map[string]any {
			b := map[string]any{"name": "Dez por cento", "type": "discount", "channels": []string{"pdv"}, "discount": discount,
				"starts_at": time.Now().Add(-time.Hour).Format(time.RFC3339), "ends_at": time.Now().Add(24 * time.Hour).Format(time.RFC3339)}
			for i := 0; i+1 < len(top); i += 2 {
				b[top[i].(string)] = top[i+1]
			}
			return b
		}
		cases := []struct {
			name   string
			body   map[string]any
			status int
			field  string
		}{
			{"discount.discount_value", campaign(map[string]any{"mode": "percentage", "discount_value": 10}), http.StatusUnprocessableEntity, "discount.discount_value"},
			{"both names", campaign(map[string]any{"mode": "percentage", "value": 10, "discount_value": 10}), http.StatusUnprocessableEntity, "discount.discount_value"},
			{"at the top level", campaign(map[string]any{"mode": "percentage", "value": 10}, "discount_value", 10), http.StatusUnprocessableEntity, "discount_value"},
			{"null is as left out", campaign(map[string]any{"mode": "percentage", "value": 10, "discount_value": nil}), http.StatusCreated, ""},
			{"value", campaign(map[string]any{"mode": "percentage", "value": 10}), http.StatusCreated, ""},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				raw, err := json.Marshal(c.body)
				require.NoError(t, err)
				req, err := http.NewRequest(http.MethodPost, e.srv.URL+"/v1/campaigns", strings.NewReader(string(raw)))
				require.NoError(t, err)
				req.Header.Set("Authorization", "Bearer "+token)
				req.Header.Set("Content-Type", "application/json")
				res, err := e.srv.Client().Do(req)
				require.NoError(t, err)
				defer res.Body.Close()
				var got struct {
					Error, Message, Field string
				}
				require.NoError(t, json.NewDecoder(res.Body).Decode(&got))
				require.Equal(t, c.status, res.StatusCode, "%+v", got)
				if c.field != "" {
					require.Equal(t, "validation_error", got.Error)
					require.Equal(t, c.field, got.Field)
					require.Contains(t, got.Message, "renamed discount.value in version 1.1.0")
				}
			})
		}
	})
}
