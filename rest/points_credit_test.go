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

	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

func TestPointsCredit(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := ptsSetup(t, db)
		for _, prefix := range ptsPrefixes {
			t.Run(ptsPrefixName(prefix), func(t *testing.T) {
				e.ptsSetClock(ptsT0)
				defer e.ptsSetClock(time.Time{})
				cust := e.ptsCustomer(t, e.tenantID, "Ana Lima")
				path := prefix + "/points/credit"

				// An amount earns points at the default rate of 1 per whole R$ 1.
				first := e.ptsCredit(t, prefix, map[string]any{"customer_id": cust, "order_id": "ped-1", "amount": 10.99})
				id1 := ptsEntryID(t, first["entry_id"])
				want1 := map[string]any{
					"entry_id": id1, "customer_id": cust, "order_id": "ped-1",
					"points_credited": ptsN(10), "new_balance": ptsN(10),
					"expires_at": "2027-03-11T03:00:00Z", "created_at": "2026-03-10T15:04:05Z", // the midnight ending the day, in São Paulo
				}
				require.Equal(t, want1, first)
				e.ptsRequireStored(t, cust, 10, 1)

				// A repeated credit of the order, later and even with another
				// amount, answers the first result and credits nothing more.
				e.ptsSetClock(ptsT0.Add(time.Hour))
				for _, body := range []map[string]any{
					{"customer_id": cust, "order_id": "ped-1", "amount": 10.99},
					{"customer_id": cust, "order_id": "ped-1", "amount": 500},
					{"customer_id": cust, "order_id": "ped-1", "points": 70},
				} {
					r := e.ptsDo(t, http.MethodPost, path, e.token, body)
					require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
					require.Equal(t, "application/json", r.header.Get("Content-Type"))
					require.Equal(t, []string{"true"}, r.header.Values("Idempotent-Replayed"))
					require.Equal(t, want1, r.obj(t))
					e.ptsRequireStored(t, cust, 10, 1)
				}

				// points wins over amount; the amount still counts as spent.
				second := e.ptsCredit(t, prefix, map[string]any{"customer_id": cust, "order_id": "ped-2", "amount": 100, "points": 7})
				require.Equal(t, map[string]any{
					"entry_id": ptsEntryID(t, second["entry_id"]), "customer_id": cust, "order_id": "ped-2",
					"points_credited": ptsN(7), "new_balance": ptsN(17),
					"expires_at": "2027-03-11T03:00:00Z", "created_at": "2026-03-10T16:04:05Z",
				}, second)
				require.NotEqual(t, id1, second["entry_id"])

				// points alone; an amount of exactly R$ 1 earns 1 point.
				e.ptsSetClock(ptsT0.Add(2*time.Hour + 250*time.Millisecond))
				third := e.ptsCredit(t, prefix, map[string]any{"customer_id": cust, "order_id": "ped-3", "points": 1000000000})
				require.Equal(t, map[string]any{
					"entry_id": ptsEntryID(t, third["entry_id"]), "customer_id": cust, "order_id": "ped-3",
					"points_credited": ptsN(1000000000), "new_balance": ptsN(1000000017),
					"expires_at": "2027-03-11T03:00:00Z", "created_at": "2026-03-10T17:04:05.25Z",
				}, third)
				fourth := e.ptsCredit(t, prefix, map[string]any{"customer_id": cust, "order_id": "ped-4", "amount": json.RawMessage("1.00")})
				require.Equal(t, ptsN(1), fourth["points_credited"])
				require.Equal(t, ptsN(1000000018), fourth["new_balance"])
				e.ptsRequireStored(t, cust, 1000000018, 4)

				// The replay of the first order still answers its own result,
				// not the balance of today.
				r := e.ptsDo(t, http.MethodPost, path, e.token, map[string]any{"customer_id": cust, "order_id": "ped-1", "amount": 10.99})
				require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
				require.Equal(t, "true", r.header.Get("Idempotent-Replayed"))
				require.Equal(t, want1, r.obj(t))

				// The same order of another customer is another credit.
				other := e.ptsCustomer(t, e.tenantID, "Bia Souza")
				o := e.ptsCredit(t, prefix, map[string]any{"customer_id": other, "order_id": "ped-1", "amount": 10.99})
				require.Equal(t, ptsN(10), o["new_balance"])
				e.ptsRequireStored(t, other, 10, 1)

				b := e.ptsBalance(t, prefix, cust)
				require.Equal(t, ptsN(1000000018), b["points_balance"])
				require.Equal(t, json.Number("111.99"), b["lifetime_value"], "10.99 + 100 + 1.00; replays add nothing")
				e.ptsRequireStored(t, cust, 1000000018, 4)
			})
		}
	})
}

func TestPointsEarningRate(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := ptsSetup(t, db)
		double := e.newTenant(t, "Loja Dobro")
		two := decimal.NewFromInt(2)
		_, err := e.app.Backoffice.UpdateTenant(ptsSys(), double, backoffice.TenantSettings{PointsPerReal: &two})
		require.NoError(t, err)
		doubleToken := e.tenantToken(t, double, ptsScopeRead, ptsScopeWrite)

		const none, tooMany = "earns no points", "earns more than 1000000000 points"
		cases := []struct {
			name    string
			double  bool
			amount  any
			points  int64
			refused string // the message of the 422 on amount, when refused
		}{
			{"10.99 at the default rate", false, 10.99, 10, ""},
			{"10.99 at 2 per real", true, 10.99, 21, ""},
			{"1.00 at the default rate", false, "1.00", 1, ""},
			{"0.99 at the default rate", false, 0.99, 0, none},
			{"0.01 at the default rate", false, 0.01, 0, none},
			{"0 at the default rate", false, 0, 0, none},
			{"0.50 at 2 per real", true, 0.5, 1, ""},
			{"0.49 at 2 per real", true, 0.49, 0, none},
			{"1234.56 at 2 per real", true, 1234.56, 2469, ""},
			{"the largest amount at the default rate", false, "1000000000.00", 1000000000, ""},
			{"500000000.00 at 2 per real", true, "500000000.00", 1000000000, ""},
			{"500000000.50 at 2 per real", true, "500000000.50", 0, tooMany},
		}
		for _, prefix := range ptsPrefixes {
			for i, tc := range cases {
				t.Run(ptsPrefixName(prefix)+"/"+tc.name, func(t *testing.T) {
					tenant, token := e.tenantID, e.token
					if tc.double {
						tenant, token = double, doubleToken
					}
					cust := e.ptsCustomer(t, tenant, "Cliente")
					amount := tc.amount
					if s, ok := amount.(string); ok {
						amount = json.RawMessage(s)
					}
					body := map[string]any{"customer_id": cust, "order_id": fmt.Sprintf("ped-%d", i), "amount": amount}
					r := e.ptsDo(t, http.MethodPost, prefix+"/points/credit", token, body)
					if tc.refused != "" {
						m := ptsRequireValidation(t, r, "amount")
						require.Contains(t, ptsDetail(t, m, "amount"), tc.refused)
						e.ptsRequireStored(t, cust, 0, 0)
						return
					}
					require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
					m := r.obj(t)
					require.Equal(t, ptsN(tc.points), m["points_credited"])
					require.Equal(t, ptsN(tc.points), m["new_balance"])
					e.ptsRequireStored(t, cust, tc.points, 1)
				})
			}
		}
	})
}

func TestPointsCreditValidation(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := ptsSetup(t, db)
		cust := e.ptsCustomer(t, e.tenantID, "Ana Lima")
		valid := map[string]any{"customer_id": cust, "order_id": "ped-1", "amount": 10.99}
		raw := func(s string) json.RawMessage { return json.RawMessage(s) }

		cases := []struct {
			name    string
			body    any
			details []string
		}{
			{"missing customer_id", withFields(valid, "customer_id", nil), []string{"customer_id"}},
			{"empty customer_id", withFields(valid, "customer_id", ""), []string{"customer_id"}},
			{"blank customer_id", withFields(valid, "customer_id", "   "), []string{"customer_id"}},
			{"null customer_id", withFields(valid, "customer_id", raw("null")), []string{"customer_id"}},
			{"missing order_id", withFields(valid, "order_id", nil), []string{"order_id"}},
			{"empty order_id", withFields(valid, "order_id", ""), []string{"order_id"}},
			{"order_id too long", withFields(valid, "order_id", strings.Repeat("x", 129)), []string{"order_id"}},
			{"neither amount nor points, no redemption", withFields(valid, "amount", nil), []string{"amount"}},
			{"null amount and points, no redemption", withFields(valid, "amount", raw("null"), "points", raw("null")), []string{"amount"}},
			{"empty object", map[string]any{}, []string{"customer_id", "order_id"}},
			{"negative amount", withFields(valid, "amount", -10), []string{"amount"}},
			{"negative amount with points", withFields(valid, "amount", -10, "points", 5), []string{"amount"}},
			{"amount with 3 decimals", withFields(valid, "amount", raw("10.999")), []string{"amount"}},
			{"amount with 3 decimals, small", withFields(valid, "amount", raw("1.001")), []string{"amount"}},
			{"amount below R$ 1", withFields(valid, "amount", 0.99), []string{"amount"}},
			{"amount zero", withFields(valid, "amount", 0), []string{"amount"}},
			{"amount too large", withFields(valid, "amount", raw("10000000000")), []string{"amount"}},
			{"amount of 1e400", withFields(valid, "amount", raw("1e400")), []string{"amount"}},
			{"points zero", withFields(valid, "points", 0), []string{"points"}},
			{"points negative", withFields(valid, "points", -5), []string{"points"}},
			{"points fractional", withFields(valid, "points", 1.5), []string{"points"}},
			{"points too large", withFields(valid, "points", 1000000001), []string{"points"}},
			{"points far too large", withFields(valid, "points", raw("1e20")), []string{"points"}},
			{"both amount and points wrong", withFields(valid, "amount", -1, "points", 0), []string{"amount", "points"}},
			{"customer_id is a number", withFields(valid, "customer_id", 42), []string{"customer_id"}},
			{"customer_id is an object", withFields(valid, "customer_id", map[string]any{"id": cust}), []string{"customer_id"}},
			{"order_id is a boolean", withFields(valid, "order_id", true), []string{"order_id"}},
			{"order_id is a number", withFields(valid, "order_id", 1234), []string{"order_id"}},
			{"amount is a numeric string", withFields(valid, "amount", "10.99"), []string{"amount"}},
			{"amount is a string", withFields(valid, "amount", "dez"), []string{"amount"}},
			{"amount is a boolean", withFields(valid, "amount", true), []string{"amount"}},
			{"amount is an object", withFields(valid, "amount", map[string]any{"value": 10}), []string{"amount"}},
			{"points is a numeric string", withFields(valid, "points", "7"), []string{"points"}},
			{"points is an array", withFields(valid, "points", []int{7}), []string{"points"}},
			{"points is a boolean", withFields(valid, "points", false), []string{"points"}},
		}
		badJSON := []struct{ name, body, message string }{
			{"malformed", `{"customer_id": "` + cust + `", `, ""},
			{"not JSON", `customer_id=` + cust, ""},
			{"empty body", ``, "the body is empty"},
			{"trailing garbage", `{"customer_id":"` + cust + `","order_id":"ped-1","amount":10} x`, ""},
			{"two objects", `{"customer_id":"` + cust + `","order_id":"ped-1","amount":10}{}`, ""},
			{"array", `[{"customer_id":"` + cust + `"}]`, ""},
			{"string", `"ped-1"`, ""},
		}
		validJSON, err := json.Marshal(valid)
		require.NoError(t, err)

		for _, prefix := range ptsPrefixes {
			path := prefix + "/points/credit"
			t.Run(ptsPrefixName(prefix), func(t *testing.T) {
				for _, tc := range cases {
					t.Run("422 "+tc.name, func(t *testing.T) {
						r := e.ptsDo(t, http.MethodPost, path, e.token, tc.body)
						ptsRequireValidation(t, r, tc.details...)
					})
				}
				for _, tc := range badJSON {
					t.Run("400 "+tc.name, func(t *testing.T) {
						r := e.ptsRaw(t, http.MethodPost, path, e.token, "application/json", tc.body)
						m := requireV1Error(t, r, http.StatusBadRequest, "invalid_json", "")
						if tc.message != "" {
							require.Equal(t, tc.message, m["message"])
						}
					})
				}
				for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "application/xml", "not a media type/"} {
					t.Run("415 "+ct, func(t *testing.T) {
						r := e.ptsRaw(t, http.MethodPost, path, e.token, ct, string(validJSON))
						requireV1Error(t, r, http.StatusUnsupportedMediaType, "unsupported_media_type", "")
					})
				}
			})
		}
		// The messages of wrong types name the type expected.
		r := e.ptsDo(t, http.MethodPost, "/points/credit", e.token, withFields(valid, "amount", "10.99"))
		require.Equal(t, "must be a number", ptsDetail(t, ptsRequireValidation(t, r, "amount"), "amount"))
		r = e.ptsDo(t, http.MethodPost, "/points/credit", e.token, withFields(valid, "points", true))
		require.Equal(t, "must be a number", ptsDetail(t, ptsRequireValidation(t, r, "points"), "points"))
		r = e.ptsDo(t, http.MethodPost, "/points/credit", e.token, withFields(valid, "order_id", 1))
		require.Equal(t, "must be a string", ptsDetail(t, ptsRequireValidation(t, r, "order_id"), "order_id"))

		e.ptsRequireStored(t, cust, 0, 0)

		// An amount given as 10.990 has two decimal places.
		m := e.ptsCredit(t, "", withFields(valid, "amount", raw("10.990")))
		require.Equal(t, ptsN(10), m["points_credited"])
		e.ptsRequireStored(t, cust, 10, 1)
	})
}

func TestPointsNotFound(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := ptsSetup(t, db)
		otherTenant := e.newTenant(t, "Outra Loja")
		foreign := e.ptsCustomer(t, otherTenant, "Cliente de Outra Loja")
		// The foreign customer has points its tenant gave it.
		otherToken := e.tenantToken(t, otherTenant, ptsScopeRead, ptsScopeWrite)
		r := e.ptsDo(t, http.MethodPost, "/points/credit", otherToken, map[string]any{"customer_id": foreign, "order_id": "ped-1", "points": 500})
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		mine := e.ptsCustomer(t, e.tenantID, "Cliente Daqui")
		e.ptsCredit(t, "", map[string]any{"customer_id": mine, "order_id": "ped-1", "points": 500})

		ids := map[string]string{
			"unknown customer":           "cus_01jd0000000000000000000000",
			"another tenant's customer":  foreign,
			"id of another kind":         e.tenantID,
			"id with a path-like suffix": "cus_x%2F..",
		}
		for _, prefix := range ptsPrefixes {
			for what, id := range ids {
				t.Run(ptsPrefixName(prefix)+"/"+what, func(t *testing.T) {
					r := e.ptsDo(t, http.MethodPost, prefix+"/points/credit", e.token, map[string]any{"customer_id": id, "order_id": "ped-9", "points": 10})
					m := requireV1Error(t, r, http.StatusNotFound, "not_found", "")
					require.Equal(t, "customer not found", m["message"])
					r = e.ptsDo(t, http.MethodPost, prefix+"/points/credit", e.token, map[string]any{"customer_id": id, "order_id": "ped-9", "amount": 10})
					requireV1Error(t, r, http.StatusNotFound, "not_found", "")
					r = e.ptsDo(t, http.MethodPost, prefix+"/points/debit", e.token, map[string]any{"customer_id": id, "points": 10})
					requireV1Error(t, r, http.StatusNotFound, "not_found", "")
					r = e.ptsDo(t, http.MethodPost, prefix+"/points/debit", e.token, map[string]any{"customer_id": id, "points": 10, "order_id": "ped-1"})
					requireV1Error(t, r, http.StatusNotFound, "not_found", "")
					r = e.ptsDo(t, http.MethodGet, prefix+"/points/balance/"+id, e.token, nil)
					requireV1Error(t, r, http.StatusNotFound, "not_found", "")
					r = e.ptsDo(t, http.MethodGet, prefix+"/points/statement/"+id, e.token, nil)
					requireV1Error(t, r, http.StatusNotFound, "not_found", "")
					r = e.ptsDo(t, http.MethodGet, prefix+"/points/statement/"+id+"?limit=5&from=2026-01-01", e.token, nil)
					requireV1Error(t, r, http.StatusNotFound, "not_found", "")
				})
			}
		}
		// Nothing moved on either side.
		e.ptsRequireStored(t, foreign, 500, 1)
		e.ptsRequireStored(t, mine, 500, 1)
	})
}
