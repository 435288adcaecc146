package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// custFull is the create body of a customer with every field set.
func custFull(name, email, cpf string) map[string]any {
	return map[string]any{
		"external_id": "erp-1", "name": name, "email": email, "cpf": cpf,
		"phone": "+5511987654321", "birth_date": "1990-05-17", "gender": "F",
		"address": map[string]any{"street": "Rua Augusta, 100", "city": "São Paulo", "state": "SP", "zip_code": "01305-000"},
		"consent": map[string]any{"marketing_email": true, "marketing_sms": true},
	}
}

// custWithout returns the record without the keys that change on every
// write, for comparing two records.
func custWithout(m map[string]any, keys ...string) map[string]any {
	out := withFields(m)
	for _, k := range append(keys, "updated_at") {
		delete(out, k)
	}
	return out
}

func TestCustomerReplace(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := custSetup(t, db)
		cpf, otherCPF := e.custNewCPF(), e.custNewCPF()
		id := e.custCreate(t, e.token, custFull("Ana Lima", "ana@x.com", cpf))
		e.custCreate(t, e.token, custBasic("Bia Reis", "Bia@X.com", otherCPF))
		before := e.custGet(t, id)
		path := "/v1/customers/" + id

		t.Run("create fields are required", func(t *testing.T) {
			cases := []struct {
				name    string
				body    map[string]any
				details []string
			}{
				{"no name", withFields(custFull("Ana", "ana@x.com", cpf), "name", nil), []string{"name"}},
				{"no email", withFields(custFull("Ana", "ana@x.com", cpf), "email", nil), []string{"email"}},
				{"no cpf", withFields(custFull("Ana", "ana@x.com", cpf), "cpf", nil), []string{"cpf"}},
				{"only optional fields", map[string]any{"phone": "+5511987654321"}, []string{"name", "email", "cpf"}},
				{"null name", withFields(custBasic("Ana", "ana@x.com", cpf), "name", nil, "phone", nil), []string{"name"}},
				{"bad phone", withFields(custBasic("Ana", "ana@x.com", cpf), "phone", "987654321"), []string{"phone"}},
				{"bad CPF", custBasic("Ana", "ana@x.com", "111.111.111-11"), []string{"cpf"}},
			}
			cases[4].body["name"] = nil // present as null
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					r := e.custDo(t, http.MethodPut, path, e.token, tc.body)
					requireV1Error(t, r, http.StatusUnprocessableEntity, "validation_error", tc.details[0], tc.details...)
				})
			}
			require.Equal(t, before, e.custGet(t, id), "a refused PUT changed the customer")
		})

		t.Run("409 when the e-mail or CPF is another customer's", func(t *testing.T) {
			for _, tc := range []struct {
				body  map[string]any
				field string
			}{
				{custBasic("Ana", "Bia@X.com", cpf), "email"},
				{custBasic("Ana", "bia@x.com", cpf), "email"},
				{custBasic("Ana", "ana@x.com", otherCPF), "cpf"},
				{custBasic("Ana", "ana@x.com", custFormatCPF(otherCPF)), "cpf"},
			} {
				r := e.custDo(t, http.MethodPut, path, e.token, tc.body)
				requireV1Error(t, r, http.StatusConflict, "duplicate_customer", tc.field)
			}
			require.Equal(t, before, e.custGet(t, id), "a refused PUT changed the customer")
		})

		t.Run("404 for an unknown id", func(t *testing.T) {
			r := e.custDo(t, http.MethodPut, "/v1/customers/cus_01jd0000000000000000000000", e.token, custBasic("Ana", "nova@x.com", e.custNewCPF()))
			m := requireV1Error(t, r, http.StatusNotFound, "not_found", "")
			require.Equal(t, "customer not found", m["message"])
		})

		t.Run("omitted optional fields are cleared", func(t *testing.T) {
			from := time.Now()
			r := e.custDo(t, http.MethodPut, path, e.token, custBasic("Ana Maria Lima", "ANA@x.com", custFormatCPF(cpf)))
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			got := r.obj(t)
			custRequireTime(t, got["updated_at"], from, time.Now())
			consent := got["consent"].(map[string]any)
			// Both consents were given; a replacement without them withdraws them.
			custRequireTime(t, consent["updated_at"], from, time.Now())
			require.Equal(t, map[string]any{
				"id": id, "external_id": nil, "name": "Ana Maria Lima", "email": "ANA@x.com", "cpf": custMasked(cpf),
				"phone": nil, "birth_date": nil, "gender": nil, "address": nil,
				"level": "bronze", "points_balance": json.Number("0"), "lifetime_value": json.Number("0"), "segments": []any{},
				"consent":    map[string]any{"marketing_email": false, "marketing_whatsapp": false, "data_sharing": false, "marketing_sms": false, "updated_at": consent["updated_at"]},
				"created_at": before["created_at"], "updated_at": got["updated_at"],
			}, got)
			require.Equal(t, got, e.custGet(t, id), "the PUT answer is not the stored record")
		})

		t.Run("replaces with every field", func(t *testing.T) {
			body := custFull("Ana Lima", "ana@x.com", cpf)
			body["external_id"] = "erp-2"
			body["address"] = map[string]any{"city": "Recife"} // the other address fields are cleared
			body["gender"] = "NB"
			r := e.custDo(t, http.MethodPut, path, e.token, body)
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			got := r.obj(t)
			require.Equal(t, "erp-2", got["external_id"])
			require.Equal(t, "NB", got["gender"])
			require.Equal(t, "+5511987654321", got["phone"])
			require.Equal(t, "1990-05-17", got["birth_date"])
			require.Equal(t, map[string]any{"street": nil, "city": "Recife", "state": nil, "zip_code": nil}, got["address"])
			require.Equal(t, true, got["consent"].(map[string]any)["marketing_sms"])
		})
		require.Equal(t, 2, e.custCount(t))
	})
}

func TestCustomerPatch(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := custSetup(t, db)
		cpf, otherCPF := e.custNewCPF(), e.custNewCPF()
		id := e.custCreate(t, e.token, custFull("Ana Lima", "ana@x.com", cpf))
		e.custCreate(t, e.token, custBasic("Bia Reis", "bia@x.com", otherCPF))
		path := "/v1/customers/" + id

		// Each step patches the current record; want is what changes.
		steps := []struct {
			name        string
			contentType string
			body        string
			want        map[string]any
		}{
			{"one field", "", `{"phone":"+5521912345678"}`, map[string]any{"phone": "+5521912345678"}},
			{"empty patch", "", `{}`, map[string]any{}},
			{"merge-patch content type", "application/merge-patch+json", `{"name":"Ana L. Lima"}`, map[string]any{"name": "Ana L. Lima"}},
			{"null clears the phone", "", `{"phone":null}`, map[string]any{"phone": nil}},
			{"null clears several", "", `{"birth_date":null,"gender":null,"external_id":null}`,
				map[string]any{"birth_date": nil, "gender": nil, "external_id": nil}},
			{"nested address merge keeps the street", "", `{"address":{"city":"Campinas"}}`,
				map[string]any{"address": map[string]any{"street": "Rua Augusta, 100", "city": "Campinas", "state": "SP", "zip_code": "01305-000"}}},
			{"null inside address clears one field", "", `{"address":{"zip_code":null}}`,
				map[string]any{"address": map[string]any{"street": "Rua Augusta, 100", "city": "Campinas", "state": "SP", "zip_code": nil}}},
			{"null address clears it", "", `{"address":null}`, map[string]any{"address": nil}},
			{"address again", "", `{"address":{"street":"Av. Paulista, 1"}}`,
				map[string]any{"address": map[string]any{"street": "Av. Paulista, 1", "city": nil, "state": nil, "zip_code": nil}}},
			{"own CPF formatted, own e-mail in another case", "", `{"cpf":"` + custFormatCPF(cpf) + `","email":"Ana@X.com"}`,
				map[string]any{"email": "Ana@X.com"}},
			{"synchronization body", "", `{"external_id":"crm-9","name":"Ana Lima","email":"ana.lima@x.com","cpf":"` + cpf + `","phone":"+5511900000000"}`,
				map[string]any{"external_id": "crm-9", "name": "Ana Lima", "email": "ana.lima@x.com", "phone": "+5511900000000"}},
		}
		current := e.custGet(t, id)
		for _, st := range steps {
			t.Run(st.name, func(t *testing.T) {
				ct := st.contentType
				if ct == "" {
					ct = "application/json"
				}
				from := time.Now()
				r := e.custRaw(t, http.MethodPatch, path, e.token, ct, st.body)
				require.Equal(t, http.StatusOK, r.status, "%s", r.body)
				got := r.obj(t)
				custRequireTime(t, got["updated_at"], from, time.Now())
				want := custWithout(current)
				for k, v := range st.want {
					want[k] = v
				}
				require.Equal(t, want, custWithout(got))
				require.Equal(t, got, e.custGet(t, id), "the PATCH answer is not the stored record")
				current = got
			})
		}

		refused := []struct {
			name, body string
			status     int
			code       string
			details    []string
		}{
			{"null name", `{"name":null}`, 422, "validation_error", []string{"name"}},
			{"null email", `{"email":null}`, 422, "validation_error", []string{"email"}},
			{"null cpf", `{"cpf":null}`, 422, "validation_error", []string{"cpf"}},
			{"all required null", `{"name":null,"email":null,"cpf":null,"phone":null}`, 422, "validation_error", []string{"name", "email", "cpf"}},
			{"empty name", `{"name":""}`, 422, "validation_error", []string{"name"}},
			{"bad phone", `{"phone":"9999"}`, 422, "validation_error", []string{"phone"}},
			{"bad gender", `{"gender":"X"}`, 422, "validation_error", []string{"gender"}},
			{"future birth date", `{"birth_date":"2999-01-01"}`, 422, "validation_error", []string{"birth_date"}},
			{"bad CPF", `{"cpf":"123.456.789-00"}`, 422, "validation_error", []string{"cpf"}},
			{"name of wrong type", `{"name":["Ana"]}`, 422, "validation_error", []string{"name"}},
			{"address of wrong type", `{"address":"Rua X"}`, 422, "validation_error", []string{"address"}},
			{"address city of wrong type", `{"address":{"city":1}}`, 422, "validation_error", []string{"address.city"}},
			{"another customer's e-mail", `{"email":"BIA@x.com"}`, 409, "duplicate_customer", []string{"email"}},
			{"another customer's CPF", `{"cpf":"` + custFormatCPF(otherCPF) + `"}`, 409, "duplicate_customer", []string{"cpf"}},
			{"malformed JSON", `{"name":`, 400, "invalid_json", nil},
			{"trailing data", `{"name":"X"} {}`, 400, "invalid_json", nil},
		}
		for _, tc := range refused {
			t.Run(tc.name, func(t *testing.T) {
				r := e.custRaw(t, http.MethodPatch, path, e.token, "application/merge-patch+json", tc.body)
				field := ""
				if len(tc.details) > 0 {
					field = tc.details[0]
				}
				if tc.code == "validation_error" {
					requireV1Error(t, r, tc.status, tc.code, field, tc.details...)
				} else {
					requireV1Error(t, r, tc.status, tc.code, field)
				}
			})
		}
		t.Run("415", func(t *testing.T) {
			r := e.custRaw(t, http.MethodPatch, path, e.token, "text/plain", `{"name":"X"}`)
			requireV1Error(t, r, http.StatusUnsupportedMediaType, "unsupported_media_type", "")
		})
		t.Run("404", func(t *testing.T) {
			r := e.custDo(t, http.MethodPatch, "/v1/customers/cus_01jd0000000000000000000000", e.token, map[string]any{"name": "X"})
			requireV1Error(t, r, http.StatusNotFound, "not_found", "")
		})
		require.Equal(t, custWithout(current), custWithout(e.custGet(t, id)), "a refused PATCH changed the customer")
		require.Equal(t, current["updated_at"], e.custGet(t, id)["updated_at"])
	})
}

func TestCustomerConsentUpdatedAt(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := custSetup(t, db)
		cpf := e.custNewCPF()
		id := e.custCreate(t, e.token, custBasic("Ana Lima", "ana@x.com", cpf))
		path := "/v1/customers/" + id
		// No consent given yet: no consent time.
		require.Equal(t, map[string]any{"marketing_email": false, "marketing_whatsapp": false, "data_sharing": false, "marketing_sms": false, "updated_at": nil}, e.custGet(t, id)["consent"])

		// Timestamps are rendered to the second: pin the stored consent time
		// in the past so that any change of it shows.
		const pinned = "2026-01-02T03:04:05Z"
		pin := func(t *testing.T) {
			ts, _ := time.Parse(time.RFC3339, pinned)
			require.NoError(t, db.Ent.Customer.UpdateOneID(id).SetConsentUpdatedAt(ts).Exec(custSys()))
		}
		pin(t)
		steps := []struct {
			name          string
			method, body  string
			email, sms    bool
			consentMoves  bool
			keepPinnedNow bool
		}{
			{"PATCH the same flags", http.MethodPatch, `{"consent":{"marketing_email":false,"marketing_sms":false}}`, false, false, false, false},
			{"PATCH another field", http.MethodPatch, `{"name":"Ana M. Lima"}`, false, false, false, false},
			{"PATCH an empty consent", http.MethodPatch, `{"consent":{}}`, false, false, false, false},
			{"PATCH a null consent with no consent given", http.MethodPatch, `{"consent":null}`, false, false, false, false},
			{"PATCH one flag", http.MethodPatch, `{"consent":{"marketing_email":true}}`, true, false, true, false},
			{"PATCH the same flag again", http.MethodPatch, `{"consent":{"marketing_email":true}}`, true, false, false, false},
			{"PATCH the other flag to its value", http.MethodPatch, `{"consent":{"marketing_sms":false}}`, true, false, false, false},
			{"PATCH the other flag", http.MethodPatch, `{"consent":{"marketing_sms":true}}`, true, true, true, false},
			{"PUT with the same flags", http.MethodPut, `{"name":"Ana","email":"ana@x.com","cpf":"` + cpf + `","consent":{"marketing_email":true,"marketing_sms":true}}`, true, true, false, false},
			{"PUT without consent withdraws it", http.MethodPut, `{"name":"Ana","email":"ana@x.com","cpf":"` + cpf + `"}`, false, false, true, false},
			{"PUT without consent again", http.MethodPut, `{"name":"Ana","email":"ana@x.com","cpf":"` + cpf + `"}`, false, false, false, false},
			{"PATCH both flags", http.MethodPatch, `{"consent":{"marketing_email":true,"marketing_sms":true}}`, true, true, true, false},
			{"PATCH a null consent withdraws both", http.MethodPatch, `{"consent":null}`, false, false, true, false},
		}
		for _, st := range steps {
			t.Run(st.name, func(t *testing.T) {
				pin(t)
				from := time.Now()
				r := e.custRaw(t, st.method, path, e.token, "application/json", st.body)
				require.Equal(t, http.StatusOK, r.status, "%s", r.body)
				consent := r.obj(t)["consent"].(map[string]any)
				require.Equal(t, st.email, consent["marketing_email"])
				require.Equal(t, st.sms, consent["marketing_sms"])
				if st.consentMoves {
					custRequireTime(t, consent["updated_at"], from, time.Now())
				} else {
					require.Equal(t, pinned, consent["updated_at"])
				}
				require.Equal(t, consent, e.custGet(t, id)["consent"])
			})
		}

		// Consent given at creation is timed at creation.
		from := time.Now()
		other := e.custCreate(t, e.token, withFields(custBasic("Bia", "bia@x.com", e.custNewCPF()), "consent", map[string]any{"marketing_sms": true}))
		c := e.custGet(t, other)["consent"].(map[string]any)
		require.Equal(t, false, c["marketing_email"])
		require.Equal(t, true, c["marketing_sms"])
		custRequireTime(t, c["updated_at"], from, time.Now())
	})
}

// custSync is the CRM synchronization of the document: search by the
// external id, PATCH the first match, otherwise POST. It returns the
// method used and the customer id.
func (e *custEnv) custSync(t *testing.T, token string, body map[string]any) (string, string) {
	t.Helper()
	p := e.custList(t, token, url.Values{"search": {body["external_id"].(string)}})
	if len(p.ids) > 0 {
		r := e.custDo(t, http.MethodPatch, "/v1/customers/"+p.ids[0], token, body)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		return http.MethodPatch, p.ids[0]
	}
	return http.MethodPost, e.custCreate(t, token, body)
}

func TestCRMSynchronization(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := custSetup(t, db)
		token := e.tenantToken(t, e.tenantID, custScopeRead, custScopeWrite)
		// Customers whose e-mail or name looks like the external id must not
		// be taken for it.
		e.custCreate(t, token, withFields(custBasic("Carlos", "carlos@x.com", e.custNewCPF()), "external_id", "crm-10"))
		cpf := e.custNewCPF()

		first := map[string]any{"external_id": "crm-1", "name": "Ana Lima", "email": "ana@x.com", "cpf": cpf, "phone": "+5511987654321"}
		method, id := e.custSync(t, token, first)
		require.Equal(t, http.MethodPost, method)

		second := map[string]any{"external_id": "crm-1", "name": "Ana Lima Souza", "email": "ana.souza@x.com", "cpf": custFormatCPF(cpf), "phone": "+5511912345678"}
		method, id2 := e.custSync(t, token, second)
		require.Equal(t, http.MethodPatch, method, "the second run must update the customer it created")
		require.Equal(t, id, id2)

		// Running it again changes nothing and creates nothing.
		method, id3 := e.custSync(t, token, second)
		require.Equal(t, http.MethodPatch, method)
		require.Equal(t, id, id3)

		p := e.custList(t, token, url.Values{"search": {"crm-1"}})
		require.Equal(t, []string{id}, p.ids)
		require.Equal(t, 1, p.total)
		require.Equal(t, 2, e.custCount(t))
		got := e.custGet(t, id)
		require.Equal(t, "crm-1", got["external_id"])
		require.Equal(t, "Ana Lima Souza", got["name"])
		require.Equal(t, "ana.souza@x.com", got["email"])
		require.Equal(t, "+5511912345678", got["phone"])
		require.Equal(t, custMasked(cpf), got["cpf"])
	})
}

func TestCustomerConcurrentCreate(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := custSetup(t, db)
		const n = 20
		cases := []struct {
			name  string
			body  func(i int, cpf string) map[string]any
			field string // "" when either field may clash first
		}{
			{"same e-mail and CPF", func(i int, cpf string) map[string]any {
				return custBasic(fmt.Sprintf("Ana %d", i), "ana@x.com", cpf)
			}, ""},
			{"same e-mail in other cases", func(i int, cpf string) map[string]any {
				return custBasic("Bia", []string{"bia@x.com", "Bia@X.com", "BIA@X.COM", " bia@x.com"}[i%4], e.custNewCPF())
			}, "email"},
			{"same CPF in other formats", func(i int, cpf string) map[string]any {
				return custBasic("Carla", fmt.Sprintf("carla%d@x.com", i), []string{cpf, custFormatCPF(cpf)}[i%2])
			}, "cpf"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				before := e.custCount(t)
				cpf := e.custNewCPF()
				bodies := make([][]byte, n)
				for i := range n {
					bodies[i], _ = json.Marshal(tc.body(i, cpf))
				}
				start := make(chan struct{})
				results := make([]apiResp, n)
				var wg sync.WaitGroup
				for i := range n {
					wg.Go(func() {
						<-start
						req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/v1/customers", bytes.NewReader(bodies[i]))
						req.Header.Set("Content-Type", "application/json")
						req.Header.Set("Authorization", "Bearer "+e.token)
						res, err := e.srv.Client().Do(req)
						if err != nil {
							results[i] = apiResp{status: -1, body: []byte(err.Error())}
							return
						}
						defer res.Body.Close()
						b, _ := io.ReadAll(res.Body)
						results[i] = apiResp{status: res.StatusCode, header: res.Header, body: b}
					})
				}
				close(start)
				wg.Wait()
				created := 0
				for _, r := range results {
					e.custRequireNoCPF(t, "concurrent create response", string(r.body))
					if r.status == http.StatusCreated {
						created++
						continue
					}
					m := requireV1Error(t, r, http.StatusConflict, "duplicate_customer", tc.field)
					require.Contains(t, []any{"email", "cpf"}, m["field"])
				}
				require.Equal(t, 1, created, "exactly one create must win")
				require.Equal(t, before+1, e.custCount(t), "exactly one row must be stored")
			})
		}
	})
}

func TestCustomerCPFNeverLogged(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := custSetup(t, db)
		cpf := e.custNewCPF()
		requests := 0
		do := func(method, path string, body any) apiResp {
			requests++
			return e.custDo(t, method, path, e.token, body)
		}

		id := e.custCreate(t, e.token, custFull("Ana Lima", "ana@x.com", custFormatCPF(cpf)))
		requests++
		// Sequential duplicates, on the CPF in both formats.
		require.Equal(t, http.StatusConflict, do(http.MethodPost, "/v1/customers", custBasic("Outra", "outra@x.com", cpf)).status)
		require.Equal(t, http.StatusConflict, do(http.MethodPost, "/v1/customers", custBasic("Outra", "outra@x.com", custFormatCPF(cpf))).status)

		// A race on one new CPF, so that the database's unique index refuses
		// some of them.
		raced := e.custNewCPF()
		start := make(chan struct{})
		var wg sync.WaitGroup
		statuses := make([]int, 10)
		for i := range statuses {
			requests++
			wg.Go(func() {
				<-start
				body, _ := json.Marshal(custBasic("Corrida", fmt.Sprintf("corrida%d@x.com", i), []string{raced, custFormatCPF(raced)}[i%2]))
				req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/v1/customers", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+e.token)
				res, err := e.srv.Client().Do(req)
				if err != nil {
					return
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				statuses[i] = res.StatusCode
			})
		}
		close(start)
		wg.Wait()
		slices.Sort(statuses)
		require.Equal(t, []int{201, 409, 409, 409, 409, 409, 409, 409, 409, 409}, statuses)

		// Validation errors around a valid and an invalid CPF.
		invalid := cpf[:9] + string('0'+(cpf[9]-'0'+1)%10) + cpf[10:]
		e.custSecret(invalid)
		require.Equal(t, 422, do(http.MethodPost, "/v1/customers", custBasic("Ana", "not-an-email", cpf)).status)
		require.Equal(t, 422, do(http.MethodPost, "/v1/customers", custBasic("Ana", "ana2@x.com", invalid)).status)
		require.Equal(t, 422, do(http.MethodPost, "/v1/customers", custBasic("Ana", "ana2@x.com", custFormatCPF(invalid))).status)
		asNumber := strings.TrimLeft(cpf, "0") // a JSON number has no leading zero
		e.custSecret(asNumber)
		require.Equal(t, 422, do(http.MethodPost, "/v1/customers", map[string]any{"name": "Ana", "email": "ana2@x.com", "cpf": json.Number(asNumber)}).status)
		require.Equal(t, 400, do(http.MethodPost, "/v1/customers", `{"name":"Ana","cpf":"`+cpf+`"`).status)
		require.Equal(t, 422, do(http.MethodPatch, "/v1/customers/"+id, map[string]any{"cpf": invalid}).status)

		// Reads, searches by CPF and updates.
		require.Equal(t, 200, do(http.MethodGet, "/v1/customers/"+id, nil).status)
		for _, q := range []string{cpf, custFormatCPF(cpf), raced, invalid} {
			require.Equal(t, 200, do(http.MethodGet, "/v1/customers?search="+url.QueryEscape(q), nil).status)
		}
		require.Equal(t, 200, do(http.MethodGet, "/v1/customers?search="+url.QueryEscape(cpf)+"&limit=1", nil).status)
		require.Equal(t, 422, do(http.MethodGet, "/v1/customers?search="+url.QueryEscape(cpf)+"&limit=0", nil).status)
		require.Equal(t, 200, do(http.MethodPatch, "/v1/customers/"+id, map[string]any{"cpf": custFormatCPF(cpf)}).status)
		require.Equal(t, 200, do(http.MethodPut, "/v1/customers/"+id, custBasic("Ana", "ana@x.com", cpf)).status)
		require.Equal(t, 409, do(http.MethodPut, "/v1/customers/"+id, custBasic("Ana", "ana@x.com", raced)).status)

		// Close waits for every handler, so every log line is written.
		e.srv.Close()
		logs := e.logs.String()
		lines := strings.Split(strings.TrimSpace(logs), "\n")
		accessLines := 0
		for _, l := range lines {
			var rec map[string]any
			require.NoError(t, json.Unmarshal([]byte(l), &rec), "log line %q", l)
			if rec["msg"] == "request" && strings.HasPrefix(rec["path"].(string), "/v1/customers") {
				accessLines++
			}
		}
		require.Equal(t, requests, accessLines, "the logs were not captured:\n%s", logs)
		e.custRequireNoCPF(t, "the server log", logs)
		for _, d := range []string{cpf, raced, invalid} {
			require.NotContains(t, logs, d[:3]+"."+d[3:6]+"."+d[6:9])
		}
	})
}
