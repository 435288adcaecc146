package rest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// ptsPage is a decoded statement page.
type ptsPage struct {
	items      []map[string]any
	nextCursor any
	hasMore    bool
	total      int64
}

func (e *ptsEnv) ptsStatement(t *testing.T, prefix, customerID string, q url.Values) ptsPage {
	t.Helper()
	path := prefix + "/points/statement/" + customerID
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	r := e.ptsDo(t, http.MethodGet, path, e.token, nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	require.Equal(t, "application/json", r.header.Get("Content-Type"))
	m := r.obj(t)
	require.Equal(t, []string{"customer_id", "data", "pagination"}, sortedKeys(m))
	require.Equal(t, customerID, m["customer_id"])
	data, ok := m["data"].([]any)
	require.True(t, ok, "data is not an array: %s", r.body)
	var p ptsPage
	for _, d := range data {
		p.items = append(p.items, d.(map[string]any))
	}
	p.nextCursor, p.hasMore, p.total = requirePagination(t, m)
	return p
}

// ptsWalk follows next_cursor from the first page and returns every item and
// the size of each page; every page reports total.
func (e *ptsEnv) ptsWalk(t *testing.T, prefix, customerID string, q url.Values, total int64) ([]map[string]any, []int) {
	t.Helper()
	var all []map[string]any
	var sizes []int
	q2 := url.Values{}
	for k, v := range q {
		q2[k] = v
	}
	for {
		p := e.ptsStatement(t, prefix, customerID, q2)
		require.Equal(t, total, p.total)
		all = append(all, p.items...)
		sizes = append(sizes, len(p.items))
		if !p.hasMore {
			break
		}
		require.Less(t, len(sizes), 1000, "pagination does not end")
		q2.Set("cursor", p.nextCursor.(string))
	}
	return all, sizes
}

func ptsReversed(s []map[string]any) []map[string]any {
	out := slices.Clone(s)
	slices.Reverse(out)
	return out
}

func TestPointsStatement(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := ptsSetup(t, db)
		s0 := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
		for _, prefix := range ptsPrefixes {
			t.Run(ptsPrefixName(prefix), func(t *testing.T) {
				defer e.ptsSetClock(time.Time{})
				cust := e.ptsCustomer(t, e.tenantID, "Ana Lima")
				neighbour := e.ptsCustomer(t, e.tenantID, "Bia Souza")

				empty := e.ptsStatement(t, prefix, cust, nil)
				require.Empty(t, empty.items)
				require.Equal(t, int64(0), empty.total)
				r := e.ptsDo(t, http.MethodGet, prefix+"/points/statement/"+cust, e.token, nil)
				require.Contains(t, string(r.body), `"data":[]`)

				// 23 entries an hour apart: credits by amount, credits by
				// points, debits with and without an order.
				const n = 23
				var want []map[string]any // oldest first
				for i := range n {
					at := s0.Add(time.Duration(i) * time.Hour)
					e.ptsSetClock(at)
					created, expires := ptsTime(at), ptsTime(ptsExpiry(at))
					switch {
					case i%5 == 3:
						body := map[string]any{"customer_id": cust, "points": 2, "reason": fmt.Sprintf("brinde %d", i)}
						var source any
						if i != 8 {
							body["order_id"] = fmt.Sprintf("troca-%d", i)
							source = fmt.Sprintf("troca-%d", i)
						}
						m := e.ptsDebit(t, prefix, body)
						want = append(want, map[string]any{
							"id": m["entry_id"], "kind": "debit", "points": ptsN(-2), "balance_after": m["new_balance"], "debt_after": ptsN(0),
							"source": map[string]any{"kind": "order", "id": source}, "reason": fmt.Sprintf("brinde %d", i),
							"amount": nil, "expires_at": nil, "created_at": created,
						})
					case i%4 == 1:
						m := e.ptsCredit(t, prefix, map[string]any{"customer_id": cust, "order_id": fmt.Sprintf("ped-%d", i), "points": 2*i + 1})
						want = append(want, map[string]any{
							"id": m["entry_id"], "kind": "credit", "points": ptsN(int64(2*i + 1)), "balance_after": m["new_balance"], "debt_after": ptsN(0),
							"source": map[string]any{"kind": "order", "id": fmt.Sprintf("ped-%d", i)}, "reason": "",
							"amount": nil, "expires_at": expires, "created_at": created,
						})
					default:
						amount := fmt.Sprintf("%d.50", i+1)
						m := e.ptsCredit(t, prefix, map[string]any{"customer_id": cust, "order_id": fmt.Sprintf("ped-%d", i), "amount": json.RawMessage(amount)})
						require.Equal(t, ptsN(int64(i+1)), m["points_credited"])
						want = append(want, map[string]any{
							"id": m["entry_id"], "kind": "credit", "points": ptsN(int64(i + 1)), "balance_after": m["new_balance"], "debt_after": ptsN(0),
							"source": map[string]any{"kind": "order", "id": fmt.Sprintf("ped-%d", i)}, "reason": "",
							"amount": json.Number(decimal.RequireFromString(amount).String()), "expires_at": expires, "created_at": created,
						})
					}
					// Another customer's movements never show.
					e.ptsCredit(t, prefix, map[string]any{"customer_id": neighbour, "order_id": fmt.Sprintf("ped-%d", i), "points": 1})
				}
				require.Equal(t, json.Number("1.5"), want[0]["amount"])
				newest := ptsReversed(want)

				// The first page has the default limit of 20, newest first,
				// with the exact entry keys.
				p := e.ptsStatement(t, prefix, cust, nil)
				require.Equal(t, int64(n), p.total)
				require.True(t, p.hasMore)
				require.Equal(t, newest[:20], p.items)
				for _, it := range p.items {
					require.Equal(t, sortedCopy("id", "kind", "points", "balance_after", "debt_after", "source", "reason", "amount", "expires_at", "created_at"), sortedKeys(it))
				}

				// Walking every page returns each entry once, in order.
				for _, tc := range []struct {
					limit string
					sizes []int
				}{
					{"1", slices.Repeat([]int{1}, n)},
					{"5", []int{5, 5, 5, 5, 3}},
					{"23", []int{23}},
					{"100", []int{23}},
				} {
					all, sizes := e.ptsWalk(t, prefix, cust, url.Values{"limit": {tc.limit}}, n)
					require.Equal(t, tc.sizes, sizes, "limit %s", tc.limit)
					require.Equal(t, newest, all, "limit %s", tc.limit)
				}

				// The period is inclusive of from and exclusive of to.
				at := func(h int) string { return ptsTime(s0.Add(time.Duration(h) * time.Hour)) }
				periods := []struct {
					name     string
					q        url.Values
					from, to int // indexes of want: [from, to)
				}{
					{"from and to", url.Values{"from": {at(5)}, "to": {at(12)}}, 5, 12},
					{"one entry", url.Values{"from": {at(7)}, "to": {at(8)}}, 7, 8},
					{"a microsecond", url.Values{"from": {at(7)}, "to": {ptsTime(s0.Add(7*time.Hour + time.Microsecond))}}, 7, 8},
					{"between entries", url.Values{"from": {ptsTime(s0.Add(7*time.Hour + time.Second))}, "to": {at(8)}}, 8, 8},
					{"from only", url.Values{"from": {at(20)}}, 20, n},
					{"to only", url.Values{"to": {at(2)}}, 0, 2},
					{"from with an offset", url.Values{"from": {"2026-04-01T08:00:00-03:00"}}, 2, n},
					{"to with fractional seconds", url.Values{"to": {"2026-04-01T11:00:00.000001Z"}}, 0, 3},
					{"from as a date", url.Values{"from": {"2026-04-02"}}, 15, n},
					{"to as a date", url.Values{"to": {"2026-04-02"}}, 0, 15},
					{"before everything", url.Values{"to": {"2026-04-01"}}, 0, 0},
					{"after everything", url.Values{"from": {at(n)}}, n, n},
				}
				for _, pc := range periods {
					wantItems := ptsReversed(want[pc.from:pc.to])
					all, _ := e.ptsWalk(t, prefix, cust, pc.q, int64(pc.to-pc.from))
					require.Equal(t, len(wantItems), len(all), pc.name)
					if len(wantItems) > 0 {
						require.Equal(t, wantItems, all, pc.name)
					}
					// Paged through 3 at a time, with the filter on every page.
					q := url.Values{"limit": {"3"}}
					for k, v := range pc.q {
						q[k] = v
					}
					all, sizes := e.ptsWalk(t, prefix, cust, q, int64(pc.to-pc.from))
					require.Equal(t, (len(wantItems)+2)/3+boolInt(len(wantItems) == 0), len(sizes), pc.name)
					require.Equal(t, len(wantItems), len(all), pc.name)
					if len(wantItems) > 0 {
						require.Equal(t, wantItems, all, pc.name)
					}
				}

				// from at or after to: 422 on to.
				for _, q := range []url.Values{
					{"from": {at(5)}, "to": {at(5)}},
					{"from": {at(6)}, "to": {at(5)}},
					{"from": {"2026-04-02"}, "to": {"2026-04-01T23:59:59Z"}},
				} {
					r := e.ptsDo(t, http.MethodGet, prefix+"/points/statement/"+cust+"?"+q.Encode(), e.token, nil)
					ptsRequireValidation(t, r, "to")
				}

				// Malformed parameters: 422 on the parameter.
				walked := e.ptsStatement(t, prefix, cust, url.Values{"limit": {"2"}})
				foreignCursor := ptsCursor(t, &ent.Cursor{ID: cust})
				valueCursor := ptsCursor(t, &ent.Cursor{ID: want[3]["id"].(string), Value: "x"})
				bad := []struct {
					name    string
					q       url.Values
					details []string
				}{
					{"from not a date", url.Values{"from": {"ontem"}}, []string{"from"}},
					{"from month 13", url.Values{"from": {"2026-13-01"}}, []string{"from"}},
					{"from Brazilian date", url.Values{"from": {"01/04/2026"}}, []string{"from"}},
					{"from without offset", url.Values{"from": {"2026-04-01T09:00:00"}}, []string{"from"}},
					{"from with a space", url.Values{"from": {"2026-04-01 09:00:00Z"}}, []string{"from"}},
					{"from as epoch", url.Values{"from": {"1775034000"}}, []string{"from"}},
					{"to not a date", url.Values{"to": {"amanhã"}}, []string{"to"}},
					{"to day 31 of April", url.Values{"to": {"2026-04-31"}}, []string{"to"}},
					{"from and to malformed", url.Values{"from": {"x"}, "to": {"y"}}, []string{"from", "to"}},
					{"limit zero", url.Values{"limit": {"0"}}, []string{"limit"}},
					{"limit negative", url.Values{"limit": {"-1"}}, []string{"limit"}},
					{"limit above 100", url.Values{"limit": {"101"}}, []string{"limit"}},
					{"limit not a number", url.Values{"limit": {"dez"}}, []string{"limit"}},
					{"limit fractional", url.Values{"limit": {"2.5"}}, []string{"limit"}},
					{"cursor garbage", url.Values{"cursor": {"not-a-cursor"}}, []string{"cursor"}},
					{"cursor truncated", url.Values{"cursor": {walked.nextCursor.(string)[:5]}}, []string{"cursor"}},
					{"cursor of another list", url.Values{"cursor": {foreignCursor}}, []string{"cursor"}},
					{"cursor with a value", url.Values{"cursor": {valueCursor}}, []string{"cursor"}},
					{"everything at once", url.Values{"limit": {"0"}, "cursor": {"x"}, "from": {"x"}, "to": {"y"}}, []string{"limit", "cursor", "from", "to"}},
				}
				for _, tc := range bad {
					r := e.ptsDo(t, http.MethodGet, prefix+"/points/statement/"+cust+"?"+tc.q.Encode(), e.token, nil)
					ptsRequireValidation(t, r, tc.details...)
				}
				// A genuine cursor keeps working after all that.
				next := e.ptsStatement(t, prefix, cust, url.Values{"limit": {"2"}, "cursor": {walked.nextCursor.(string)}})
				require.Equal(t, newest[2:4], next.items)
			})
		}
	})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ptsCursor renders c as a next_cursor.
func ptsCursor(t *testing.T, c *ent.Cursor) string {
	t.Helper()
	var b strings.Builder
	c.MarshalGQL(&b)
	s, err := strconv.Unquote(b.String())
	require.NoError(t, err)
	return s
}

func TestPointsAuthorization(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := ptsSetup(t, db)
		cust := e.ptsCustomer(t, e.tenantID, "Ana Lima")
		e.ptsCredit(t, "", map[string]any{"customer_id": cust, "order_id": "ped-0", "points": 100})
		readOnly := e.tenantToken(t, e.tenantID, ptsScopeRead)
		writeOnly := e.tenantToken(t, e.tenantID, ptsScopeWrite)
		others := e.tenantToken(t, e.tenantID, "customers:read", "customers:write", "campaigns:read", "campaigns:write")

		for _, prefix := range ptsPrefixes {
			routes := []struct {
				method, path string
				body         any
				scope        string
				ok           int
			}{
				{http.MethodPost, prefix + "/points/credit", map[string]any{"customer_id": cust, "order_id": "ped-1" + prefix, "points": 10}, ptsScopeWrite, http.StatusCreated},
				{http.MethodPost, prefix + "/points/debit", map[string]any{"customer_id": cust, "order_id": "troca-1" + prefix, "points": 5}, ptsScopeWrite, http.StatusCreated},
				{http.MethodGet, prefix + "/points/balance/" + cust, nil, ptsScopeRead, http.StatusOK},
				{http.MethodGet, prefix + "/points/statement/" + cust, nil, ptsScopeRead, http.StatusOK},
			}
			for _, rt := range routes {
				t.Run(rt.method+" "+rt.path, func(t *testing.T) {
					before, entries := e.ptsStored(t, cust)

					requireUnauthenticated(t, e.srv, rt.method, rt.path, rt.body)
					// A token without the scope: 403 naming it.
					wrong := writeOnly
					if rt.scope == ptsScopeWrite {
						wrong = readOnly
					}
					requireScopeRefused(t, e.srv, rt.method, rt.path, rt.body, rt.scope, wrong, others)
					// The refused calls moved nothing.
					e.ptsRequireStored(t, cust, before, entries)

					// The token of the scope alone is enough.
					right := readOnly
					if rt.scope == ptsScopeWrite {
						right = writeOnly
					}
					r := e.ptsDo(t, rt.method, rt.path, right, rt.body)
					require.Equal(t, rt.ok, r.status, "%s", r.body)
				})
			}
		}
		e.ptsRequireStored(t, cust, 100+10+10-5-5, 5)
	})
}

// Concurrent calls neither credit an order twice nor take a balance below
// zero.
func TestPointsConcurrency(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := ptsSetup(t, db)
		for _, prefix := range ptsPrefixes {
			t.Run(ptsPrefixName(prefix), func(t *testing.T) {
				cust := e.ptsCustomer(t, e.tenantID, "Ana Lima")
				const callers = 8
				run := func(body func(i int) map[string]any, path string) []apiResp {
					out := make([]apiResp, callers)
					var wg sync.WaitGroup
					for i := range callers {
						wg.Add(1)
						go func() {
							defer wg.Done()
							out[i] = e.ptsDo(t, http.MethodPost, prefix+path, e.token, body(i))
						}()
					}
					wg.Wait()
					return out
				}

				// The same order credited at once: one credit, every answer
				// the same, all but one marked as replays.
				rs := run(func(int) map[string]any {
					return map[string]any{"customer_id": cust, "order_id": "ped-1", "points": 100}
				}, "/points/credit")
				replays := 0
				for _, r := range rs {
					require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
					require.Equal(t, string(rs[0].body), string(r.body))
					if r.header.Get("Idempotent-Replayed") == "true" {
						replays++
					}
				}
				require.Equal(t, callers-1, replays)
				e.ptsRequireStored(t, cust, 100, 1)

				// Debits of 30 at once from 100: three pass, the rest are refused.
				rs = run(func(i int) map[string]any {
					return map[string]any{"customer_id": cust, "order_id": fmt.Sprintf("troca-%d", i), "points": 30}
				}, "/points/debit")
				var balances []string
				refused := 0
				for _, r := range rs {
					switch r.status {
					case http.StatusCreated:
						balances = append(balances, string(r.obj(t)["new_balance"].(json.Number)))
					default:
						requireV1Error(t, r, http.StatusUnprocessableEntity, "insufficient_points", "points")
						refused++
					}
				}
				sort.Strings(balances)
				require.Equal(t, []string{"10", "40", "70"}, balances)
				require.Equal(t, callers-3, refused)
				e.ptsRequireStored(t, cust, 10, 4)
			})
		}
	})
}
