package rest

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/privacy"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

func TestCustomerList(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := custSetup(t, db)
		const n = 45
		var created []string // oldest first
		for i := range n {
			created = append(created, e.custCreate(t, e.token, custBasic(fmt.Sprintf("Cliente %02d", i), fmt.Sprintf("cliente%02d@loja.com", i), e.custNewCPF())))
		}
		newestFirst := custReversed(created)
		// Another tenant's customers never show.
		otherTenant := e.newTenant(t, "Outra Loja")
		tokB := e.tenantToken(t, otherTenant, custScopeRead, custScopeWrite)
		e.custCreate(t, tokB, custBasic("Cliente de outra loja", "cliente00@loja.com", e.custNewCPF()))

		t.Run("default page of 20, newest first", func(t *testing.T) {
			p := e.custList(t, e.token, nil)
			require.Equal(t, newestFirst[:20], p.ids)
			require.True(t, p.hasMore)
			require.Equal(t, n, p.total)
		})

		t.Run("list items carry exactly the documented fields", func(t *testing.T) {
			p := e.custList(t, e.token, url.Values{"limit": {"1"}})
			require.Len(t, p.items, 1)
			item := p.items[0]
			require.Equal(t, sortedCopy("id", "external_id", "name", "email", "cpf", "phone", "level", "points_balance",
				"segments", "created_at", "updated_at"), sortedKeys(item))
			full := e.custGet(t, item["id"].(string))
			for k, v := range item {
				require.Equal(t, full[k], v, "list item and full record differ on %s", k)
			}
			require.Equal(t, "Cliente 44", item["name"])
			require.Regexp(t, `^\*\*\*\.\*\*\*\.\*\*\*-\d\d$`, item["cpf"])
			require.Equal(t, []any{}, item["segments"])
		})

		for _, limit := range []struct {
			limit string
			pages int
		}{{"1", n}, {"7", 7}, {"20", 3}, {"45", 1}, {"44", 2}, {"100", 1}} {
			t.Run("walk with limit "+limit.limit, func(t *testing.T) {
				all := e.custWalk(t, url.Values{"limit": {limit.limit}}, limit.pages)
				// No duplicate and no gap: exactly every customer, newest first.
				require.Equal(t, newestFirst, all)
			})
		}

		t.Run("last page", func(t *testing.T) {
			first := e.custList(t, e.token, url.Values{"limit": {"40"}})
			require.Len(t, first.ids, 40)
			last := e.custList(t, e.token, url.Values{"limit": {"40"}, "cursor": {first.nextCursor.(string)}})
			require.Equal(t, newestFirst[40:], last.ids)
			require.False(t, last.hasMore)
			require.Nil(t, last.nextCursor)
			require.Equal(t, n, last.total)
		})

		for _, bad := range []string{"0", "101", "abc", "-1", "1.5", "20abc", "1e2"} {
			t.Run("limit "+bad, func(t *testing.T) {
				r := e.custDo(t, http.MethodGet, "/v1/customers?limit="+url.QueryEscape(bad), e.token, nil)
				requireV1Error(t, r, http.StatusUnprocessableEntity, "validation_error", "limit", "limit")
			})
		}

		t.Run("bad cursors", func(t *testing.T) {
			tampered := func(c ent.Cursor) string {
				var b strings.Builder
				c.MarshalGQL(&b)
				return strings.Trim(b.String(), `"`)
			}
			for _, cursor := range []string{
				"not-a-cursor!!", "bm90LWEtY3Vyc29y", "e30",
				tampered(ent.Cursor{ID: created[0], Value: "yesterday"}),
				tampered(ent.Cursor{ID: created[0], Value: 42}),
				tampered(ent.Cursor{ID: "", Value: time.Now()}),
				tampered(ent.Cursor{ID: "cmp_01jd0000000000000000000000"}),
				tampered(ent.Cursor{ID: created[0], Value: []any{1, 2}}),
			} {
				t.Run(cursor, func(t *testing.T) {
					r := e.custDo(t, http.MethodGet, "/v1/customers?cursor="+url.QueryEscape(cursor), e.token, nil)
					requireV1Error(t, r, http.StatusUnprocessableEntity, "validation_error", "cursor", "cursor")
				})
			}
			// Every problem of the query at once.
			r := e.custDo(t, http.MethodGet, "/v1/customers?limit=0&created_after=soon&cursor=nope", e.token, nil)
			requireV1Error(t, r, http.StatusUnprocessableEntity, "validation_error", "limit", "limit", "cursor", "created_after")
		})

		t.Run("segment filter and its total", func(t *testing.T) {
			members := []string{created[3], created[10], created[30]}
			vip := e.custSegment(t, e.tenantID, "VIP", members...)
			// created[10] is in two segments: it must not count twice.
			gold := e.custSegment(t, e.tenantID, "Ouro", created[10], created[11])
			e.custSegment(t, otherTenant, "VIP da outra loja")

			p := e.custList(t, e.token, url.Values{"segment_id": {vip}, "limit": {"2"}})
			require.Equal(t, []string{created[30], created[10]}, p.ids)
			require.True(t, p.hasMore)
			require.Equal(t, 3, p.total)
			require.Equal(t, []any{vip}, p.items[0]["segments"])
			require.ElementsMatch(t, []any{vip, gold}, p.items[1]["segments"])
			p2 := e.custList(t, e.token, url.Values{"segment_id": {vip}, "limit": {"2"}, "cursor": {p.nextCursor.(string)}})
			require.Equal(t, []string{created[3]}, p2.ids)
			require.False(t, p2.hasMore)
			require.Equal(t, 3, p2.total)

			require.Equal(t, 3, e.custList(t, e.token, url.Values{"segment_id": {vip}, "limit": {"1"}}).total)
			p3 := e.custList(t, e.token, url.Values{"segment_id": {gold}})
			require.Equal(t, []string{created[11], created[10]}, p3.ids)
			require.Equal(t, 2, p3.total)
			// Segment and search together.
			p4 := e.custList(t, e.token, url.Values{"segment_id": {vip}, "search": {"cliente 10"}})
			require.Equal(t, []string{created[10]}, p4.ids)
			require.Equal(t, 1, p4.total)
			// An unknown segment, or another tenant's, has no members.
			for _, seg := range []string{"seg_01jd0000000000000000000000"} {
				p := e.custList(t, e.token, url.Values{"segment_id": {seg}})
				require.Empty(t, p.ids)
				require.Equal(t, 0, p.total)
			}
			// The full record lists the segments too.
			require.ElementsMatch(t, []any{vip, gold}, e.custGet(t, created[10])["segments"])
		})

		t.Run("search total counts the filtered set", func(t *testing.T) {
			// "cliente 1" matches Cliente 1x (10..19) only.
			p := e.custList(t, e.token, url.Values{"search": {"Cliente 1"}, "limit": {"3"}})
			require.Equal(t, 10, p.total)
			require.Equal(t, []string{created[19], created[18], created[17]}, p.ids)
			all := e.custWalk(t, url.Values{"search": {"Cliente 1"}, "limit": {"3"}}, 4)
			require.Equal(t, custReversed(created[10:20]), all)
		})

		t.Run("cursors are stable under inserts", func(t *testing.T) {
			p1 := e.custList(t, e.token, url.Values{"limit": {"10"}})
			require.Equal(t, newestFirst[:10], p1.ids)
			inserted := e.custCreate(t, e.token, custBasic("Cliente novo", "novo@loja.com", e.custNewCPF()))
			p2 := e.custList(t, e.token, url.Values{"limit": {"10"}, "cursor": {p1.nextCursor.(string)}})
			require.Equal(t, newestFirst[10:20], p2.ids, "an insert shifted the next page")
			require.Equal(t, n+1, p2.total)
			p3 := e.custList(t, e.token, url.Values{"limit": {"10"}, "cursor": {p2.nextCursor.(string)}})
			require.Equal(t, newestFirst[20:30], p3.ids)
			fresh := e.custList(t, e.token, url.Values{"limit": {"10"}})
			require.Equal(t, append([]string{inserted}, newestFirst[:9]...), fresh.ids)
		})
	})
}

func TestCustomerListCreatedAfter(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := custSetup(t, db)
		at := func(s string) time.Time {
			ts, err := time.Parse(time.RFC3339, s)
			require.NoError(t, err)
			return ts
		}
		ids := map[string]string{}
		for _, c := range []struct{ name, at string }{
			{"jan", "2026-01-10T12:00:00Z"},
			{"feb", "2026-02-10T12:00:00Z"},
			{"mar", "2026-03-10T12:00:00Z"},
		} {
			cpf := e.custNewCPF()
			row, err := db.Ent.Customer.Create().SetTenantID(e.tenantID).SetName(c.name).SetEmail(c.name + "@x.com").
				SetDocument(cpf).SetCreatedAt(at(c.at)).Save(custSys())
			require.NoError(t, err)
			ids[c.name] = row.ID
		}
		cases := []struct {
			after string
			want  []string
		}{
			{"2026-01-01", []string{"mar", "feb", "jan"}},
			{"2026-02-01", []string{"mar", "feb"}},
			{"2026-02-10T12:00:00Z", []string{"mar"}}, // strictly after
			{"2026-02-10T09:00:00-03:00", []string{"mar"}},
			{"2026-02-10T08:59:59-03:00", []string{"mar", "feb"}},
			{"2026-02-10T11:59:59.999Z", []string{"mar", "feb"}},
			{"2026-03-10T12:00:00+00:00", nil},
			{"2027-01-01", nil},
		}
		for _, tc := range cases {
			t.Run(tc.after, func(t *testing.T) {
				p := e.custList(t, e.token, url.Values{"created_after": {tc.after}})
				var want []string
				for _, w := range tc.want {
					want = append(want, ids[w])
				}
				require.Equal(t, want, p.ids)
				require.Equal(t, len(want), p.total)
				require.False(t, p.hasMore)
			})
		}
		// created_after with pagination keeps the filter on every page.
		p := e.custList(t, e.token, url.Values{"created_after": {"2026-01-01"}, "limit": {"2"}})
		require.Equal(t, []string{ids["mar"], ids["feb"]}, p.ids)
		require.Equal(t, 3, p.total)
		p = e.custList(t, e.token, url.Values{"created_after": {"2026-01-01"}, "limit": {"2"}, "cursor": {p.nextCursor.(string)}})
		require.Equal(t, []string{ids["jan"]}, p.ids)

		for _, bad := range []string{"yesterday", "2026-13-01", "10/02/2026", "2026-02-10T12:00:00", "2026-02-10 12:00:00Z", "1700000000"} {
			t.Run("malformed "+bad, func(t *testing.T) {
				r := e.custDo(t, http.MethodGet, "/v1/customers?created_after="+url.QueryEscape(bad), e.token, nil)
				requireV1Error(t, r, http.StatusUnprocessableEntity, "validation_error", "created_after", "created_after")
			})
		}
	})
}

// TestCustomerSearch: a name is found by word prefixes (accents and case
// ignored, every word of the term beginning some word of the name), an
// e-mail and an external id only whole, a CPF by document lookup; never an
// erased customer or another tenant's.
func TestCustomerSearch(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := custSetup(t, db)
		joseCPF, mariaCPF, pedroCPF := e.custNewCPF(), e.custNewCPF(), e.custNewCPF()
		jose := e.custCreate(t, e.token, withFields(custBasic("José Conceição", "jc@example.com", joseCPF), "external_id", "crm-777"))
		maria := e.custCreate(t, e.token, withFields(custBasic("Maria Souza", "Maria.Souza@Loja.com.br", custFormatCPF(mariaCPF)), "external_id", "crm-778"))
		pedro := e.custCreate(t, e.token, custBasic("Pedro Álvares", "pedro@example.com", pedroCPF))
		ana := e.custCreate(t, e.token, custBasic("Ana Souza-Dias 1234", "ana@example.com", e.custNewCPF()))
		// The same person in another tenant is never found.
		otherTenant := e.newTenant(t, "Outra Loja")
		e.custCreate(t, e.tenantToken(t, otherTenant, custScopeWrite), withFields(custBasic("José Conceição", "jc@example.com", joseCPF), "external_id", "crm-777"))

		cases := []struct {
			search string
			want   []string
		}{
			{"jose conceicao", []string{jose}},
			{"José Conceição", []string{jose}},
			{"JOSÉ CONCEIÇÃO", []string{jose}},
			{"CONCEI", []string{jose}},
			{"conceição", []string{jose}},
			{"  jose   conceicao ", []string{jose}},
			{"conc jo", []string{jose}}, // words in any order
			{"j", []string{jose}},
			{"alvares", []string{pedro}},
			{"souza", []string{ana, maria}},
			{"dias", []string{ana}},       // a hyphen separates words
			{"souza-dias", []string{ana}}, // both words
			{"ana 12", []string{ana}},
			{"ana 1234 souza", []string{ana}},
			{"maria souza", []string{maria}},
			{"jose souza", nil}, // every word must match
			{"ouza", nil},       // no substring
			{"ceicao", nil},
			{"234", nil},
			{"MARIA.SOUZA@LOJA.COM.BR", []string{maria}}, // an e-mail whole, any case
			{"jc@example.com", []string{jose}},
			{"souza@loja", nil}, // part of an e-mail is no match
			{"@example.com", nil},
			{"example", nil},
			{mariaCPF, []string{maria}},
			{custFormatCPF(mariaCPF), []string{maria}},
			{custFormatCPF(joseCPF), []string{jose}},
			{pedroCPF, []string{pedro}},
			{"crm-777", []string{jose}},
			{"crm-778", []string{maria}},
			{"crm-77", nil}, // an external id whole
			{"crm", nil},
			{"nobody", nil},
			{"%", nil},
			{"_", nil},
			{`"souza`, []string{ana, maria}}, // punctuation separates words
			{`souza*`, []string{ana, maria}},
			{`-`, nil},
		}
		for _, tc := range cases {
			t.Run(tc.search, func(t *testing.T) {
				p := e.custList(t, e.token, url.Values{"search": {tc.search}})
				require.Equal(t, tc.want, p.ids)
				require.Equal(t, len(tc.want), p.total)
			})
		}
		// An empty search is no filter.
		require.Equal(t, 4, e.custList(t, e.token, url.Values{"search": {""}}).total)
		// Search pages like the plain list, with the total of the matches.
		p := e.custList(t, e.token, url.Values{"search": {"souza"}, "limit": {"1"}})
		require.Equal(t, []string{ana}, p.ids)
		require.True(t, p.hasMore)
		require.Equal(t, 2, p.total)
		p = e.custList(t, e.token, url.Values{"search": {"souza"}, "limit": {"1"}, "cursor": {p.nextCursor.(string)}})
		require.Equal(t, []string{maria}, p.ids)
		require.False(t, p.hasMore)
		require.Equal(t, 2, p.total)
		// A renamed customer is found by the new name only (the search index
		// follows updates), and by the new e-mail.
		r := e.custDo(t, http.MethodPatch, "/v1/customers/"+pedro, e.token, map[string]any{"name": "Pedro Cabral", "email": "pc@loja.example"})
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		require.Equal(t, []string{pedro}, e.custList(t, e.token, url.Values{"search": {"cabral"}}).ids)
		require.Equal(t, []string{pedro}, e.custList(t, e.token, url.Values{"search": {"pc@loja.example"}}).ids)
		require.Empty(t, e.custList(t, e.token, url.Values{"search": {"alvares"}}).ids)
		require.Empty(t, e.custList(t, e.token, url.Values{"search": {"pedro@example.com"}}).ids)
		// An erased customer is found by nothing.
		r = e.custDo(t, http.MethodDelete, "/v1/customers/"+ana, e.tokenFor(t, custScopeWrite, privacy.ScopePrivacyWrite), nil)
		require.Equal(t, http.StatusNoContent, r.status, string(r.body))
		require.Equal(t, []string{maria}, e.custList(t, e.token, url.Values{"search": {"souza"}}).ids)
		require.Empty(t, e.custList(t, e.token, url.Values{"search": {"ana"}}).ids)
		require.Empty(t, e.custList(t, e.token, url.Values{"search": {"ana@example.com"}}).ids)
	})
}
