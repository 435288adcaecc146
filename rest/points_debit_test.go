package rest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

func TestPointsDebit(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := ptsSetup(t, db)
		for _, prefix := range ptsPrefixes {
			t.Run(ptsPrefixName(prefix), func(t *testing.T) {
				defer e.ptsSetClock(time.Time{})
				cust := e.ptsCustomer(t, e.tenantID, "Ana Lima")
				path := prefix + "/points/debit"
				e.ptsSetClock(ptsT0)
				e.ptsCredit(t, prefix, map[string]any{"customer_id": cust, "order_id": "ped-1", "points": 100})
				e.ptsSetClock(ptsT0.Add(24 * time.Hour))
				e.ptsCredit(t, prefix, map[string]any{"customer_id": cust, "order_id": "ped-2", "amount": 50.5})

				e.ptsSetClock(ptsT0.Add(48*time.Hour + 123456*time.Microsecond))
				first := e.ptsDebit(t, prefix, map[string]any{"customer_id": cust, "points": 30, "order_id": "troca-1", "reason": "troca por brinde"})
				want := map[string]any{
					"entry_id": ptsEntryID(t, first["entry_id"]), "customer_id": cust, "order_id": "troca-1",
					"points_debited": ptsN(30), "new_balance": ptsN(120), "created_at": "2026-03-12T15:04:05.123456Z",
				}
				require.Equal(t, want, first)
				e.ptsRequireStored(t, cust, 120, 3)

				// A repeated debit of the order answers the first result, even
				// with other points, and takes nothing more.
				e.ptsSetClock(ptsT0.Add(72 * time.Hour))
				for _, body := range []map[string]any{
					{"customer_id": cust, "points": 30, "order_id": "troca-1", "reason": "troca por brinde"},
					{"customer_id": cust, "points": 999999, "order_id": "troca-1"},
					{"customer_id": cust, "points": 1, "order_id": "troca-1", "reason": "outro motivo"},
				} {
					r := e.ptsDo(t, http.MethodPost, path, e.token, body)
					require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
					require.Equal(t, "application/json", r.header.Get("Content-Type"))
					require.Equal(t, []string{"true"}, r.header.Values("Idempotent-Replayed"))
					require.Equal(t, want, r.obj(t))
					e.ptsRequireStored(t, cust, 120, 3)
				}

				// Without an order id every call debits, and order_id is null.
				for i, wantBalance := range []int64{110, 100} {
					m := e.ptsDebit(t, prefix, map[string]any{"customer_id": cust, "points": 10})
					require.Equal(t, map[string]any{
						"entry_id": ptsEntryID(t, m["entry_id"]), "customer_id": cust, "order_id": nil,
						"points_debited": ptsN(10), "new_balance": ptsN(wantBalance), "created_at": "2026-03-13T15:04:05Z",
					}, m, "debit %d", i)
				}
				e.ptsRequireStored(t, cust, 100, 5)

				// More than the balance: 422 insufficient_points, nothing taken.
				for _, body := range []map[string]any{
					{"customer_id": cust, "points": 101},
					{"customer_id": cust, "points": 101, "order_id": "troca-2"},
					{"customer_id": cust, "points": 1000000000, "order_id": "troca-2"},
				} {
					r := e.ptsDo(t, http.MethodPost, path, e.token, body)
					m := requireV1Error(t, r, http.StatusUnprocessableEntity, "insufficient_points", "points")
					require.Equal(t, "the customer's balance is lower than the points asked", m["message"])
					e.ptsRequireStored(t, cust, 100, 5)
				}
				require.Equal(t, ptsN(100), e.ptsBalance(t, prefix, cust)["points_balance"])

				// The refused order may be debited once the points suffice;
				// the whole balance may be spent, and no more.
				m := e.ptsDebit(t, prefix, map[string]any{"customer_id": cust, "points": 100, "order_id": "troca-2"})
				require.Equal(t, ptsN(100), m["points_debited"])
				require.Equal(t, ptsN(0), m["new_balance"])
				r := e.ptsDo(t, http.MethodPost, path, e.token, map[string]any{"customer_id": cust, "points": 1})
				requireV1Error(t, r, http.StatusUnprocessableEntity, "insufficient_points", "points")
				e.ptsRequireStored(t, cust, 0, 6)
				require.Equal(t, ptsN(0), e.ptsBalance(t, prefix, cust)["points_balance"])

				// A credit and a debit of the same order id are different movements.
				c := e.ptsCredit(t, prefix, map[string]any{"customer_id": cust, "order_id": "troca-1", "points": 5})
				require.Equal(t, ptsN(5), c["new_balance"])
				e.ptsRequireStored(t, cust, 5, 7)
			})
		}
	})
}

// Points past their expiry cannot be spent even before the expiry job has
// taken them from the balance.
func TestPointsDebitExpiredLots(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := ptsSetup(t, db)
		for _, prefix := range ptsPrefixes {
			t.Run(ptsPrefixName(prefix), func(t *testing.T) {
				defer e.ptsSetClock(time.Time{})
				cust := e.ptsCustomer(t, e.tenantID, "Ana Lima")
				e.ptsSetClock(ptsT0)
				e.ptsCredit(t, prefix, map[string]any{"customer_id": cust, "order_id": "ped-1", "points": 100})
				e.ptsSetClock(ptsT0.AddDate(0, 6, 0))
				e.ptsCredit(t, prefix, map[string]any{"customer_id": cust, "order_id": "ped-2", "points": 40})

				e.ptsSetClock(ptsExpiry(ptsT0)) // the first lot expires now
				r := e.ptsDo(t, http.MethodPost, prefix+"/points/debit", e.token, map[string]any{"customer_id": cust, "points": 41})
				requireV1Error(t, r, http.StatusUnprocessableEntity, "insufficient_points", "points")
				e.ptsRequireStored(t, cust, 140, 2)
				m := e.ptsDebit(t, prefix, map[string]any{"customer_id": cust, "points": 40})
				require.Equal(t, ptsN(100), m["new_balance"])
			})
		}
	})
}

func TestPointsDebitValidation(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := ptsSetup(t, db)
		cust := e.ptsCustomer(t, e.tenantID, "Ana Lima")
		e.ptsCredit(t, "", map[string]any{"customer_id": cust, "order_id": "ped-1", "points": 100})
		valid := map[string]any{"customer_id": cust, "points": 10, "order_id": "troca-1", "reason": "brinde"}
		raw := func(s string) json.RawMessage { return json.RawMessage(s) }

		cases := []struct {
			name    string
			body    any
			details []string
		}{
			{"missing customer_id", withFields(valid, "customer_id", nil), []string{"customer_id"}},
			{"blank customer_id", withFields(valid, "customer_id", " "), []string{"customer_id"}},
			{"missing points", withFields(valid, "points", nil), []string{"points"}},
			{"null points", withFields(valid, "points", raw("null")), []string{"points"}},
			{"empty object", map[string]any{}, []string{"points"}},
			{"points zero", withFields(valid, "points", 0), []string{"points"}},
			{"points negative", withFields(valid, "points", -10), []string{"points"}},
			{"points fractional", withFields(valid, "points", 2.5), []string{"points"}},
			{"points too large", withFields(valid, "points", 1000000001), []string{"points"}},
			{"points far too large", withFields(valid, "points", raw("9007199254740993")), []string{"points"}},
			{"empty order_id", withFields(valid, "order_id", ""), []string{"order_id"}},
			{"order_id too long", withFields(valid, "order_id", strings.Repeat("x", 129)), []string{"order_id"}},
			{"reason too long", withFields(valid, "reason", strings.Repeat("x", 501)), []string{"reason"}},
			{"several problems", withFields(valid, "customer_id", "", "order_id", "", "reason", strings.Repeat("x", 501)), []string{"customer_id", "order_id", "reason"}},
			{"customer_id is a number", withFields(valid, "customer_id", 7), []string{"customer_id"}},
			{"points is a numeric string", withFields(valid, "points", "10"), []string{"points"}},
			{"points is a string", withFields(valid, "points", "dez"), []string{"points"}},
			{"points is a boolean", withFields(valid, "points", true), []string{"points"}},
			{"points is an object", withFields(valid, "points", map[string]any{}), []string{"points"}},
			{"order_id is a number", withFields(valid, "order_id", 12), []string{"order_id"}},
			{"reason is an array", withFields(valid, "reason", []string{"a"}), []string{"reason"}},
		}
		for _, prefix := range ptsPrefixes {
			path := prefix + "/points/debit"
			t.Run(ptsPrefixName(prefix), func(t *testing.T) {
				for _, tc := range cases {
					t.Run("422 "+tc.name, func(t *testing.T) {
						r := e.ptsDo(t, http.MethodPost, path, e.token, tc.body)
						ptsRequireValidation(t, r, tc.details...)
					})
				}
				for name, body := range map[string]string{
					"malformed": `{"customer_id":`, "empty body": ``, "array": `[]`,
					"trailing garbage": `{"customer_id":"` + cust + `","points":1}]`,
				} {
					t.Run("400 "+name, func(t *testing.T) {
						r := e.ptsRaw(t, http.MethodPost, path, e.token, "application/json", body)
						requireV1Error(t, r, http.StatusBadRequest, "invalid_json", "")
					})
				}
				t.Run("415", func(t *testing.T) {
					r := e.ptsRaw(t, http.MethodPost, path, e.token, "text/plain", `{"customer_id":"`+cust+`","points":1}`)
					requireV1Error(t, r, http.StatusUnsupportedMediaType, "unsupported_media_type", "")
				})
			})
		}
		r := e.ptsDo(t, http.MethodPost, "/points/debit", e.token, withFields(valid, "points", nil))
		require.Equal(t, "is required", ptsDetail(t, ptsRequireValidation(t, r, "points"), "points"))
		r = e.ptsDo(t, http.MethodPost, "/points/debit", e.token, withFields(valid, "points", "10"))
		require.Equal(t, "must be a number", ptsDetail(t, ptsRequireValidation(t, r, "points"), "points"))
		e.ptsRequireStored(t, cust, 100, 1)
	})
}

func TestPointsBalance(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := ptsSetup(t, db)
		t0 := time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)
		for _, prefix := range ptsPrefixes {
			t.Run(ptsPrefixName(prefix), func(t *testing.T) {
				defer e.ptsSetClock(time.Time{})
				cust := e.ptsCustomer(t, e.tenantID, "Ana Lima")
				balance := func() map[string]any { return e.ptsBalance(t, prefix, cust) }
				type lot struct {
					points    int64
					expiresAt string
				}
				want := func(pts int64, level string, next any, missing any, earned int64, ltv string, lots ...lot) map[string]any {
					var expiring int64
					items := []any{}
					for _, l := range lots {
						expiring += l.points
						items = append(items, map[string]any{"points": ptsN(l.points), "expires_at": l.expiresAt})
					}
					if m, ok := missing.(int64); ok {
						missing = ptsN(m)
					}
					return map[string]any{
						"customer_id": cust, "points_balance": ptsN(pts), "points_pending": ptsN(0), "points_debt": ptsN(0), "level": level,
						"next_level": next, "points_to_next_level": missing,
						"points_earned_last_12_months": ptsN(earned), "lifetime_value": json.Number(ltv),
						"expiring_soon": map[string]any{"points": ptsN(expiring), "days": ptsN(30), "lots": items},
					}
				}

				e.ptsSetClock(t0)
				require.Equal(t, want(0, "bronze", "silver", int64(1000), 0, "0"), balance())
				r := e.ptsDo(t, http.MethodGet, prefix+"/points/balance/"+cust, e.token, nil)
				require.Contains(t, string(r.body), `"lifetime_value":0,`, "lifetime_value is a JSON number")
				require.Contains(t, string(r.body), `"next_level":"silver"`)

				// Lot A: 999 points of R$ 999.50 at t0, expiring a year later.
				e.ptsCredit(t, prefix, map[string]any{"customer_id": cust, "order_id": "ped-a", "amount": 999.5})
				require.Equal(t, want(999, "bronze", "silver", int64(1), 999, "999.5"), balance())

				// Lot B, 20 days later: silver at 1,000 earned.
				e.ptsSetClock(t0.AddDate(0, 0, 20))
				e.ptsCredit(t, prefix, map[string]any{"customer_id": cust, "order_id": "ped-b", "points": 1, "amount": 10.25})
				require.Equal(t, want(1000, "silver", "gold", int64(4000), 1000, "1009.75"), balance())
				r = e.ptsDo(t, http.MethodGet, prefix+"/points/balance/"+cust, e.token, nil)
				require.Contains(t, string(r.body), `"lifetime_value":1009.75,`)

				// Lot C: gold at 5,000.
				e.ptsSetClock(t0.AddDate(0, 2, 0))
				e.ptsCredit(t, prefix, map[string]any{"customer_id": cust, "order_id": "ped-c", "points": 4000})
				require.Equal(t, want(5000, "gold", "diamond", int64(15000), 5000, "1009.75"), balance())

				// Lot D: diamond at 20,000, the top: no next level.
				e.ptsCredit(t, prefix, map[string]any{"customer_id": cust, "order_id": "ped-d", "points": 15000})
				require.Equal(t, want(20000, "diamond", nil, nil, 20000, "1009.75"), balance())
				r = e.ptsDo(t, http.MethodGet, prefix+"/points/balance/"+cust, e.token, nil)
				require.Contains(t, string(r.body), `"next_level":null`)
				require.Contains(t, string(r.body), `"points_to_next_level":null`)

				// A debit spends the oldest lot first and does not lower the
				// points earned.
				e.ptsDebit(t, prefix, map[string]any{"customer_id": cust, "points": 500})
				require.Equal(t, want(19500, "diamond", nil, nil, 20000, "1009.75"), balance())

				// Lots expire at the midnight ending their day, in São Paulo.
				expiresA := ptsExpiry(t0)
				lotA := lot{499, "2027-01-11T03:00:00Z"}
				lotB := lot{1, "2027-01-31T03:00:00Z"}
				// Lot A expires in exactly 30 days: it is expiring soon.
				e.ptsSetClock(expiresA.AddDate(0, 0, -30))
				require.Equal(t, want(19500, "diamond", nil, nil, 20000, "1009.75", lotA), balance())
				// A second earlier, 30 days and a second before it: not yet.
				e.ptsSetClock(expiresA.AddDate(0, 0, -30).Add(-time.Second))
				require.Equal(t, want(19500, "diamond", nil, nil, 20000, "1009.75"), balance())
				// Five days before lot A: A and B, soonest first; C and D
				// (March) are not.
				e.ptsSetClock(expiresA.AddDate(0, 0, -5))
				require.Equal(t, want(19500, "diamond", nil, nil, 20000, "1009.75", lotA, lotB), balance())
				// A further debit takes what is left of A, then B.
				e.ptsDebit(t, prefix, map[string]any{"customer_id": cust, "points": 499})
				require.Equal(t, want(19001, "diamond", nil, nil, 20000, "1009.75", lotB), balance())
				e.ptsDebit(t, prefix, map[string]any{"customer_id": cust, "points": 1})
				require.Equal(t, want(19000, "diamond", nil, nil, 20000, "1009.75"), balance())
			})
		}
	})
}

// The points earned count the trailing 12 months. The level shown is the
// stored one, which only the periodic level job lowers; next_level and
// points_to_next_level follow the points earned, as worker/points_test.go
// also pins. Until the job runs, next_level may therefore equal level.
func TestPointsBalanceEarningWindow(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := ptsSetup(t, db)
		t0 := time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)
		for _, prefix := range ptsPrefixes {
			t.Run(ptsPrefixName(prefix), func(t *testing.T) {
				defer e.ptsSetClock(time.Time{})
				cust := e.ptsCustomer(t, e.tenantID, "Ana Lima")
				e.ptsSetClock(t0)
				e.ptsCredit(t, prefix, map[string]any{"customer_id": cust, "order_id": "ped-a", "points": 999})
				e.ptsDebit(t, prefix, map[string]any{"customer_id": cust, "points": 999}) // lot A is spent
				e.ptsSetClock(t0.AddDate(0, 0, 20))
				e.ptsCredit(t, prefix, map[string]any{"customer_id": cust, "order_id": "ped-b", "points": 1})

				e.ptsSetClock(t0.AddDate(1, 0, 0)) // A's credit is exactly 12 months old: it counts
				b := e.ptsBalance(t, prefix, cust)
				require.Equal(t, "silver", b["level"])
				require.Equal(t, ptsN(1000), b["points_earned_last_12_months"])
				require.Equal(t, "gold", b["next_level"])
				require.Equal(t, ptsN(4000), b["points_to_next_level"])

				// The window starts at a midnight of the tenant's time zone
				// (America/Sao_Paulo, UTC-3): A's day leaves it at the next one.
				e.ptsSetClock(time.Date(2027, 1, 11, 2, 59, 59, 0, time.UTC))
				require.Equal(t, ptsN(1000), e.ptsBalance(t, prefix, cust)["points_earned_last_12_months"], "A's day is still in the window")
				e.ptsSetClock(time.Date(2027, 1, 11, 3, 0, 0, 0, time.UTC)) // now it is not
				b = e.ptsBalance(t, prefix, cust)
				require.Equal(t, map[string]any{
					"customer_id": cust, "points_balance": ptsN(1), "points_pending": ptsN(0), "points_debt": ptsN(0), "level": "silver",
					"next_level": "silver", "points_to_next_level": ptsN(999),
					"points_earned_last_12_months": ptsN(1), "lifetime_value": json.Number("0"),
					"expiring_soon": map[string]any{"points": ptsN(1), "days": ptsN(30), "lots": []any{
						map[string]any{"points": ptsN(1), "expires_at": "2027-01-31T03:00:00Z"}, // the local midnight ending the day
					}},
				}, b)
			})
		}
	})
}
