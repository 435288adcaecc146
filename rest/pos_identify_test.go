package rest

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/schema/sealed"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

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
			e.posSettings(t, backoffice.TenantSettings{PreRegistration: posBool(true)})
			defer e.posSettings(t, backoffice.TenantSettings{PreRegistration: posBool(false)})
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
				require.Equal(t, []string{"classification", "id", "status", "type"}, sortedKeys(c))
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
		e.posSettings(t, backoffice.TenantSettings{PreRegistration: posBool(true)})
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
