package rest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

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
		require.Equal(t, []string{"created_at", "email", "external_id", "id", "name"}, sortedKeys(created))
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
				m := requireV1Error(t, r, http.StatusConflict, "duplicate_customer", tc.field)
				require.Equal(t, tc.field, m["field"])
			})
		}
		require.Equal(t, 4, e.custCount(t), "a refused create stored a customer")

		// Uniqueness is per tenant: another tenant may register the same person.
		other2 := e.newTenant(t, "Outra Loja")
		tokB := e.tenantToken(t, other2, custScopeWrite)
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
			{"missing name", withFields(valid, "name", nil), []string{"name"}},
			{"missing email", withFields(valid, "email", nil), []string{"email"}},
			{"missing cpf", withFields(valid, "cpf", nil), []string{"cpf"}},
			{"empty object", map[string]any{}, []string{"name", "email", "cpf"}},
			{"null required fields", map[string]any{"name": nil, "email": nil, "cpf": nil}, []string{"name", "email", "cpf"}},
			{"empty name", withFields(valid, "name", ""), []string{"name"}},
			{"blank name", withFields(valid, "name", "   "), []string{"name"}},
			{"name too long", withFields(valid, "name", strings.Repeat("a", 201)), []string{"name"}},
			{"empty email", withFields(valid, "email", ""), []string{"email"}},
			{"e-mail without domain", withFields(valid, "email", "ana@"), []string{"email"}},
			{"e-mail without at", withFields(valid, "email", "ana.x.com"), []string{"email"}},
			{"e-mail with display name", withFields(valid, "email", "Ana <ana@x.com>"), []string{"email"}},
			{"CPF with wrong check digits", withFields(valid, "cpf", badDigits), []string{"cpf"}},
			{"CPF with wrong check digits, formatted", withFields(valid, "cpf", custFormatCPF(badDigits)), []string{"cpf"}},
			{"CPF of 11 repeated digits", withFields(valid, "cpf", "111.111.111-11"), []string{"cpf"}},
			{"CPF of 11 zeros", withFields(valid, "cpf", "00000000000"), []string{"cpf"}},
			{"CPF too short", withFields(valid, "cpf", cpf[:10]), []string{"cpf"}},
			{"CPF with letters", withFields(valid, "cpf", cpf[:10]+"X"), []string{"cpf"}},
			{"empty CPF", withFields(valid, "cpf", ""), []string{"cpf"}},
			{"phone without plus", withFields(valid, "phone", "11987654321"), []string{"phone"}},
			{"phone with spaces", withFields(valid, "phone", "+55 11 98765-4321"), []string{"phone"}},
			{"phone too short", withFields(valid, "phone", "+5511"), []string{"phone"}},
			{"empty phone", withFields(valid, "phone", ""), []string{"phone"}},
			{"birth date month 13", withFields(valid, "birth_date", "1990-13-01"), []string{"birth_date"}},
			{"birth date day 30 of February", withFields(valid, "birth_date", "1990-02-30"), []string{"birth_date"}},
			{"birth date Brazilian format", withFields(valid, "birth_date", "17/05/1990"), []string{"birth_date"}},
			{"birth date not padded", withFields(valid, "birth_date", "1990-5-7"), []string{"birth_date"}},
			{"birth date with time", withFields(valid, "birth_date", "1990-05-17T00:00:00Z"), []string{"birth_date"}},
			{"birth date in the future", withFields(valid, "birth_date", future), []string{"birth_date"}},
			{"gender X", withFields(valid, "gender", "X"), []string{"gender"}},
			{"gender lower case", withFields(valid, "gender", "f"), []string{"gender"}},
			{"gender word", withFields(valid, "gender", "female"), []string{"gender"}},
			{"empty external id", withFields(valid, "external_id", ""), []string{"external_id"}},
			{"name is a number", withFields(valid, "name", 123), []string{"name"}},
			{"name is an object", withFields(valid, "name", map[string]any{"first": "Ana"}), []string{"name"}},
			{"email is a boolean", withFields(valid, "email", true), []string{"email"}},
			{"cpf is a number", withFields(valid, "cpf", 52998224725), []string{"cpf"}},
			{"consent is a string", withFields(valid, "consent", "yes"), []string{"consent"}},
			{"consent flag is a string", withFields(valid, "consent", map[string]any{"marketing_email": "yes"}), []string{"consent.marketing_email"}},
			{"several problems at once", map[string]any{
				"name": "", "email": "not-an-email", "cpf": "111.111.111-11", "phone": "123",
				"birth_date": future, "gender": "X",
			}, []string{"name", "email", "cpf", "phone", "birth_date", "gender"}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := e.custDo(t, http.MethodPost, "/v1/customers", e.token, tc.body)
				requireV1Error(t, r, http.StatusUnprocessableEntity, "validation_error", tc.details[0], tc.details...)
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
				m := requireV1Error(t, r, http.StatusBadRequest, "invalid_json", "")
				if tc.message != "" {
					require.Equal(t, tc.message, m["message"])
				}
			})
		}

		for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/xml", "not a media type/"} {
			t.Run("415 "+ct, func(t *testing.T) {
				body, _ := json.Marshal(valid)
				r := e.custRaw(t, http.MethodPost, "/v1/customers", e.token, ct, string(body))
				requireV1Error(t, r, http.StatusUnsupportedMediaType, "unsupported_media_type", "")
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
		readOnly := e.tenantToken(t, e.tenantID, custScopeRead)
		writeOnly := e.tenantToken(t, e.tenantID, custScopeWrite)
		others := e.tenantToken(t, e.tenantID, "campaigns:read", "campaigns:write", "loyalty:read", "loyalty:write")
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
				requireUnauthenticated(t, e.srv, rt.method, rt.path, rt.body)
				// A token without the scope: 403 naming it.
				wrong := writeOnly
				if rt.scope == custScopeWrite {
					wrong = readOnly
				}
				requireScopeRefused(t, e.srv, rt.method, rt.path, rt.body, rt.scope, wrong, others)
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
		require.Equal(t, sortedCopy("id", "external_id", "name", "email", "cpf", "phone", "birth_date", "gender", "address",
			"level", "points_balance", "lifetime_value", "segments", "consent", "created_at", "updated_at"), sortedKeys(got))
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
		otherTenant := e.newTenant(t, "Outra Loja")
		tokB := e.tenantToken(t, otherTenant, custScopeRead, custScopeWrite)
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
				m := requireV1Error(t, r, http.StatusNotFound, "not_found", "")
				require.Equal(t, map[string]any{"error": "not_found", "message": "customer not found"}, m)
				for _, method := range []string{http.MethodPut, http.MethodPatch} {
					r := e.custDo(t, method, "/v1/customers/"+tc.id, tc.token, custBasic("X", "x@x.com", e.custNewCPF()))
					requireV1Error(t, r, http.StatusNotFound, "not_found", "")
				}
			})
		}
		require.Equal(t, "José Conceição", e.custGet(t, id)["name"], "another tenant changed a customer")
		require.Equal(t, 1, e.custList(t, tokB, nil).total)
	})
}
