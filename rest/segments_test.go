package rest

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/auditevent"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/viewer"
)

// segEnv is a tenant with three customers (Ana and Caio in Recife, Bia in
// Olinda) and a token holding both customers scopes.
type segEnv struct {
	*TestEnv
	token string
	ids   []string // ana, bia, caio
	cpfs  []string
}

func segSetup(t *testing.T, db *storage.DB) *segEnv {
	t.Helper()
	e := &segEnv{TestEnv: newTestEnv(t, db, unlimitedRates)}
	e.token = e.tokenFor(t, "customers:read", "customers:write")
	for i, c := range []struct{ name, city string }{{"Ana Lima", "Recife"}, {"Bia Souza", "Olinda"}, {"Caio Melo", "Recife"}} {
		cpf := ptsCPF(900 + i)
		r := e.do(t, http.MethodPost, "/v1/customers", map[string]any{"name": c.name, "cpf": cpf,
			"email": strings.ToLower(strings.Fields(c.name)[0]) + "@x.example", "address": map[string]any{"city": c.city, "state": "PE"}})
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		e.ids, e.cpfs = append(e.ids, r.obj(t)["id"].(string)), append(e.cpfs, cpf)
	}
	return e
}

func (e *segEnv) do(t *testing.T, method, path string, body any) apiResp {
	t.Helper()
	return apiDo(t, e.srv, method, path, e.token, body)
}

// members are the ids of the segment's members, as GET
// /v1/customers?segment_id= lists them.
func (e *segEnv) members(t *testing.T, segID string) []string {
	t.Helper()
	r := e.do(t, http.MethodGet, "/v1/customers?limit=100&segment_id="+segID, nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	var page struct{ Data []struct{ ID string } }
	require.NoError(t, json.Unmarshal(r.body, &page))
	var ids []string
	for _, c := range page.Data {
		ids = append(ids, c.ID)
	}
	slices.Sort(ids)
	return ids
}

// requireRuleError checks a 422 on rule whose message starts with pos.
func requireRuleError(t *testing.T, r apiResp, pos string) {
	t.Helper()
	require.Equal(t, http.StatusUnprocessableEntity, r.status, "%s", r.body)
	m := r.obj(t)
	require.Equal(t, "validation_error", m["error"], "%s", r.body)
	require.Equal(t, "rule", m["field"], "%s", r.body)
	details := m["details"].([]any)
	require.Len(t, details, 1)
	require.True(t, strings.HasPrefix(details[0].(map[string]any)["message"].(string), pos), "%s", r.body)
}

// TestSegmentsREST: /v1/segments creates static segments with their
// members and audiences kept by their rule, refuses a rule that does not
// type-check with its position, lists, reads and changes them, and
// previews a rule with masked customers only.
func TestSegmentsREST(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := segSetup(t, db)
		ana, bia, caio := e.ids[0], e.ids[1], e.ids[2]

		static := e.do(t, http.MethodPost, "/v1/segments", map[string]any{"name": " VIP ", "members": []string{ana, bia, ana}})
		require.Equal(t, http.StatusCreated, static.status, "%s", static.body)
		vip := static.obj(t)
		vipID := vip["id"].(string)
		assert.Equal(t, "/v1/segments/"+vipID, static.header.Get("Location"))
		assert.Equal(t, "VIP", vip["name"])
		assert.Equal(t, "static", vip["type"])
		assert.Nil(t, vip["rule"])
		assert.Equal(t, sortedCopy(ana, bia), e.members(t, vipID))

		audience := e.do(t, http.MethodPost, "/v1/segments", map[string]any{"name": "Recife", "description": "quem mora no Recife", "rule": `city == "Recife"`})
		require.Equal(t, http.StatusCreated, audience.status, "%s", audience.body)
		recifeID := audience.obj(t)["id"].(string)
		assert.Equal(t, "audience", audience.obj(t)["type"])
		assert.Equal(t, `city == "Recife"`, audience.obj(t)["rule"])
		assert.Equal(t, sortedCopy(ana, caio), e.members(t, recifeID), "its members as the answer comes")

		// Refused: nothing is created.
		for _, tc := range []struct {
			name   string
			body   map[string]any
			field  string
			status int
		}{
			{"members and a rule", map[string]any{"name": "X", "rule": "purchases > 1", "members": []string{ana}}, "members", http.StatusUnprocessableEntity},
			{"a member of no customer", map[string]any{"name": "X", "members": []string{ana, "cus_00000000000000000000000000"}}, "members", http.StatusUnprocessableEntity},
			{"no name", map[string]any{"rule": "purchases > 1"}, "name", http.StatusUnprocessableEntity},
			{"a blank name", map[string]any{"name": "  "}, "name", http.StatusUnprocessableEntity},
			{"a null rule", map[string]any{"name": "X", "rule": nil}, "rule", http.StatusUnprocessableEntity},
			{"add_members on create", map[string]any{"name": "X", "add_members": []string{ana}}, "add_members", http.StatusUnprocessableEntity},
		} {
			r := e.do(t, http.MethodPost, "/v1/segments", tc.body)
			require.Equal(t, tc.status, r.status, "%s: %s", tc.name, r.body)
			assert.Equal(t, tc.field, r.obj(t)["field"], "%s: %s", tc.name, r.body)
		}
		requireRuleError(t, e.do(t, http.MethodPost, "/v1/segments", map[string]any{"name": "X", "rule": `levl == "gold"`}), "1:1: undeclared reference to 'levl'")
		requireRuleError(t, e.do(t, http.MethodPost, "/v1/segments", map[string]any{"name": "X", "rule": "purchases > 2 &&\n city > 3"}),
			"2:7: found no matching overload for '_>_' applied to '(string, int)'")

		list := e.do(t, http.MethodGet, "/v1/segments", nil)
		require.Equal(t, http.StatusOK, list.status, "%s", list.body)
		var page struct {
			Data []struct {
				ID, Type string
			}
			Pagination pagination
		}
		require.NoError(t, json.Unmarshal(list.body, &page))
		require.Len(t, page.Data, 2, "nothing refused was saved")
		assert.Equal(t, []string{recifeID, vipID}, []string{page.Data[0].ID, page.Data[1].ID}, "newest first")
		assert.Equal(t, 2, page.Pagination.Total)
		first := e.do(t, http.MethodGet, "/v1/segments?limit=1", nil)
		require.NoError(t, json.Unmarshal(first.body, &page))
		require.True(t, page.Pagination.HasMore)
		next := e.do(t, http.MethodGet, "/v1/segments?limit=1&cursor="+*page.Pagination.NextCursor, nil)
		require.NoError(t, json.Unmarshal(next.body, &page))
		assert.Equal(t, vipID, page.Data[0].ID)
		assert.False(t, page.Pagination.HasMore)
		for kind, want := range map[string]string{"audience": recifeID, "static": vipID} {
			r := e.do(t, http.MethodGet, "/v1/segments?type="+kind, nil)
			require.NoError(t, json.Unmarshal(r.body, &page))
			require.Len(t, page.Data, 1, kind)
			assert.Equal(t, want, page.Data[0].ID, kind)
		}
		for _, q := range []string{"type=dynamic", "limit=0", "cursor=nonsense"} {
			assert.Equal(t, http.StatusUnprocessableEntity, e.do(t, http.MethodGet, "/v1/segments?"+q, nil).status, q)
		}

		got := e.do(t, http.MethodGet, "/v1/segments/"+recifeID, nil)
		require.Equal(t, http.StatusOK, got.status, "%s", got.body)
		assert.Equal(t, "quem mora no Recife", got.obj(t)["description"])
		assert.Equal(t, http.StatusNotFound, e.do(t, http.MethodGet, "/v1/segments/seg_00000000000000000000000000", nil).status)

		// A static segment: renamed, members added and removed at once.
		r := e.do(t, http.MethodPatch, "/v1/segments/"+vipID, map[string]any{"name": "VIP 2026", "add_members": []string{caio}, "remove_members": []string{ana}})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		assert.Equal(t, "VIP 2026", r.obj(t)["name"])
		assert.Equal(t, sortedCopy(bia, caio), e.members(t, vipID))
		// An audience: a new rule's members at once.
		r = e.do(t, http.MethodPatch, "/v1/segments/"+recifeID, map[string]any{"rule": `city == "Olinda"`, "description": nil})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		assert.Equal(t, `city == "Olinda"`, r.obj(t)["rule"])
		assert.Empty(t, r.obj(t)["description"])
		assert.Equal(t, []string{bia}, e.members(t, recifeID))
		for _, tc := range []struct {
			name, id string
			body     map[string]any
			status   int
			field    string
		}{
			{"an audience's members by hand", recifeID, map[string]any{"add_members": []string{ana}}, http.StatusConflict, "add_members"},
			{"an audience's members removed by hand", recifeID, map[string]any{"remove_members": []string{bia}}, http.StatusConflict, "remove_members"},
			{"a rule for a static segment", vipID, map[string]any{"rule": "purchases > 1"}, http.StatusUnprocessableEntity, "rule"},
			{"a null name", vipID, map[string]any{"name": nil}, http.StatusUnprocessableEntity, "name"},
			{"a member of no customer", vipID, map[string]any{"name": "Outro", "add_members": []string{"cus_00000000000000000000000000"}}, http.StatusUnprocessableEntity, "add_members"},
			{"members on PATCH", vipID, map[string]any{"members": []string{ana}}, http.StatusUnprocessableEntity, "members"},
		} {
			r := e.do(t, http.MethodPatch, "/v1/segments/"+tc.id, tc.body)
			require.Equal(t, tc.status, r.status, "%s: %s", tc.name, r.body)
			assert.Equal(t, tc.field, r.obj(t)["field"], "%s: %s", tc.name, r.body)
		}
		requireRuleError(t, e.do(t, http.MethodPatch, "/v1/segments/"+recifeID, map[string]any{"rule": "city > 3"}), "1:6: found no matching overload")
		assert.Equal(t, `city == "Olinda"`, e.do(t, http.MethodGet, "/v1/segments/"+recifeID, nil).obj(t)["rule"], "a refused change changes nothing")
		assert.Equal(t, "VIP 2026", e.do(t, http.MethodGet, "/v1/segments/"+vipID, nil).obj(t)["name"], "a refused change changes nothing")
		assert.Equal(t, sortedCopy(bia, caio), e.members(t, vipID))
		assert.Equal(t, http.StatusNotFound, e.do(t, http.MethodPatch, "/v1/segments/seg_00000000000000000000000000", map[string]any{"name": "X"}).status)

		// Preview: the count and masked customers, nothing saved.
		p := e.do(t, http.MethodPost, "/v1/segments/preview", map[string]any{"rule": `city == "Recife"`})
		require.Equal(t, http.StatusOK, p.status, "%s", p.body)
		var preview struct {
			Count  int
			Sample []struct {
				ID, Level      string
				MaskedDocument string `json:"masked_document"`
			}
		}
		require.NoError(t, json.Unmarshal(p.body, &preview))
		assert.Equal(t, 2, preview.Count)
		require.Len(t, preview.Sample, 2)
		assert.Equal(t, sortedCopy(ana, caio), []string{preview.Sample[0].ID, preview.Sample[1].ID}, "in id order")
		for i, m := range preview.Sample {
			cpf := e.cpfs[slices.Index(e.ids, m.ID)]
			assert.Equal(t, "***.***.***-"+cpf[9:], m.MaskedDocument, i)
			assert.Equal(t, "bronze", m.Level)
		}
		for _, personal := range []string{"Ana", "Caio", "Lima", "Melo", "@x.example", "Recife\"", e.cpfs[0][:9], e.cpfs[2][:9]} {
			assert.NotContains(t, string(p.body), personal, "no personal data beyond the masked forms")
		}
		assert.Empty(t, personalData(p.body))
		requireRuleError(t, e.do(t, http.MethodPost, "/v1/segments/preview", map[string]any{"rule": "purchases > 2 &&\n city > 3"}), "2:7:")
		r = e.do(t, http.MethodPost, "/v1/segments/preview", map[string]any{})
		require.Equal(t, http.StatusUnprocessableEntity, r.status, "%s", r.body)
		assert.Equal(t, "rule", r.obj(t)["field"])
		list = e.do(t, http.MethodGet, "/v1/segments", nil)
		require.NoError(t, json.Unmarshal(list.body, &page))
		assert.Equal(t, 2, page.Pagination.Total, "a preview saves nothing")
	})
}

// TestSegmentsRESTIsolation: another tenant's segments are 404 to read and
// change, absent from the list, and its customers outside previews and
// memberships; reading takes customers:read, writing customers:write.
func TestSegmentsRESTIsolation(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := segSetup(t, db)
		created := e.do(t, http.MethodPost, "/v1/segments", map[string]any{"name": "VIP", "members": []string{e.ids[0]}})
		require.Equal(t, http.StatusCreated, created.status, "%s", created.body)
		segID := created.obj(t)["id"].(string)

		other := e.tenantToken(t, e.newTenant(t, "Outra Loja"), "customers:read", "customers:write")
		call := func(token, method, path string, body any) apiResp { return apiDo(t, e.srv, method, path, token, body) }
		assert.Equal(t, http.StatusNotFound, call(other, http.MethodGet, "/v1/segments/"+segID, nil).status)
		assert.Equal(t, http.StatusNotFound, call(other, http.MethodPatch, "/v1/segments/"+segID, map[string]any{"name": "Minha"}).status)
		assert.Equal(t, "VIP", e.do(t, http.MethodGet, "/v1/segments/"+segID, nil).obj(t)["name"])
		list := call(other, http.MethodGet, "/v1/segments", nil)
		require.Equal(t, http.StatusOK, list.status)
		assert.NotContains(t, string(list.body), segID)
		r := call(other, http.MethodPost, "/v1/segments", map[string]any{"name": "Roubo", "members": []string{e.ids[1]}})
		require.Equal(t, http.StatusUnprocessableEntity, r.status, "another tenant's customer is no customer: %s", r.body)
		p := call(other, http.MethodPost, "/v1/segments/preview", map[string]any{"rule": "purchases >= 0"})
		require.Equal(t, http.StatusOK, p.status, "%s", p.body)
		assert.Equal(t, json.Number("0"), p.obj(t)["count"])
		audience := call(other, http.MethodPost, "/v1/segments", map[string]any{"name": "Todos", "rule": "purchases >= 0"})
		require.Equal(t, http.StatusCreated, audience.status, "%s", audience.body)
		assert.Empty(t, e.members(t, audience.obj(t)["id"].(string)), "no customer of another tenant")

		read, write := e.tokenFor(t, "customers:read"), e.tokenFor(t, "customers:write")
		none := e.tokenFor(t, "campaigns:read")
		for _, tc := range []struct {
			method, path string
			body         any
			allowed      string // the token that may
		}{
			{http.MethodGet, "/v1/segments", nil, read},
			{http.MethodGet, "/v1/segments/" + segID, nil, read},
			{http.MethodPost, "/v1/segments/preview", map[string]any{"rule": "purchases >= 0"}, read},
			{http.MethodPost, "/v1/segments", map[string]any{"name": "Novo"}, write},
			{http.MethodPatch, "/v1/segments/" + segID, map[string]any{"name": "VIP+"}, write},
		} {
			for _, tok := range []string{read, write, none} {
				r := call(tok, tc.method, tc.path, tc.body)
				if tok == tc.allowed {
					assert.Less(t, r.status, 300, "%s %s: %s", tc.method, tc.path, r.body)
					continue
				}
				assert.Equal(t, http.StatusForbidden, r.status, "%s %s: %s", tc.method, tc.path, r.body)
				assert.Equal(t, "insufficient_scope", r.obj(t)["error"])
			}
		}
	})
}

// TestSegmentRuleAudited: the audit trail records who created an audience
// and who changed its rule, whether through /v1 or GraphQL, naming the rule
// among the fields changed and keeping the rule before and after; a change
// of the name only keeps no rule.
func TestSegmentRuleAudited(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := segSetup(t, db)
		client := e.client.Client.ID
		created := e.do(t, http.MethodPost, "/v1/segments", map[string]any{"name": "Recife", "rule": `city == "Recife"`})
		require.Equal(t, http.StatusCreated, created.status, "%s", created.body)
		id := created.obj(t)["id"].(string)
		require.Equal(t, http.StatusOK, e.do(t, http.MethodPatch, "/v1/segments/"+id, map[string]any{"rule": `city == "Olinda"`}).status)
		require.Equal(t, http.StatusOK, e.do(t, http.MethodPatch, "/v1/segments/"+id, map[string]any{"name": "Olinda"}).status)
		gql := apiDo(t, e.srv, http.MethodPost, "/graphql", e.token, map[string]any{
			"query":     `mutation($id: ID!, $rule: String!) { updateSegment(id: $id, input: {rule: $rule}) { id rule } }`,
			"variables": map[string]any{"id": id, "rule": `purchases >= 1`},
		})
		require.Equal(t, http.StatusOK, gql.status, "%s", gql.body)
		require.NotContains(t, string(gql.body), `"errors"`)
		static := e.do(t, http.MethodPost, "/v1/segments", map[string]any{"name": "VIP", "members": []string{e.ids[0]}})
		require.Equal(t, http.StatusCreated, static.status, "%s", static.body)

		rows, err := db.Ent.AuditEvent.Query().Where(auditevent.TargetType("segment")).Order(ent.Asc(auditevent.FieldID)).
			All(viewer.SystemContext(context.Background()))
		require.NoError(t, err)
		type entry struct {
			actor, action, target string
			rule                  bool
			changes               map[string]any
		}
		var got []entry
		for _, r := range rows {
			got = append(got, entry{r.Actor, r.Action, r.TargetID, slices.Contains(r.Fields, "rule"), r.Changes})
		}
		change := func(before, after any) map[string]any {
			return map[string]any{"rule": map[string]any{"old": before, "new": after}}
		}
		staticID := static.obj(t)["id"].(string)
		assert.Equal(t, []entry{
			{client, "segment.created", id, true, change(nil, `city == "Recife"`)},
			{client, "segment.updated", id, true, change(`city == "Recife"`, `city == "Olinda"`)}, // REST
			{client, "segment.updated", id, false, nil},                                           // a rename
			{client, "segment.updated", id, true, change(`city == "Olinda"`, "purchases >= 1")},   // GraphQL
			{client, "segment.created", staticID, false, nil},
			{client, "segment.updated", staticID, false, nil}, // its first member
		}, got)
	})
}

// TestSegmentMembersFieldNames: GraphQL's refusals of a change of a
// segment's members (added, removed, imported) name the arguments as the
// schema writes them (segmentID, customerIDs), whichever check refuses.
func TestSegmentMembersFieldNames(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := segSetup(t, db)
		static := e.do(t, http.MethodPost, "/v1/segments", map[string]any{"name": "VIP", "members": []string{e.ids[0]}})
		require.Equal(t, http.StatusCreated, static.status, "%s", static.body)
		audience := e.do(t, http.MethodPost, "/v1/segments", map[string]any{"name": "Recife", "rule": `city == "Recife"`})
		require.Equal(t, http.StatusCreated, audience.status, "%s", audience.body)
		vip, recife := static.obj(t)["id"].(string), audience.obj(t)["id"].(string)
		for _, mutation := range []string{"addSegmentCustomers", "removeSegmentCustomers"} {
			for _, tc := range []struct {
				name, segment string
				customers     []string
				code, field   string
			}{
				{"a NUL in an id", vip, []string{e.ids[1], "cus_\u0000"}, "validation_error", "customerIDs[1]"},
				{"no customer", vip, []string{}, "validation_error", "customerIDs"},
				{"a NUL in the segment", "seg_\u0000", []string{e.ids[1]}, "validation_error", "segmentID"},
				{"an audience", recife, []string{e.ids[1]}, "audience_members", "segmentID"},
			} {
				r := apiDo(t, e.srv, http.MethodPost, "/graphql", e.token, map[string]any{
					"query":     `mutation($s: ID!, $c: [ID!]!) { ` + mutation + `(segmentID: $s, customerIDs: $c) { id } }`,
					"variables": map[string]any{"s": tc.segment, "c": tc.customers},
				})
				a := segErrors(t, r)
				require.Len(t, a.Errors, 1, "%s %s: %s", mutation, tc.name, r.body)
				assert.Equal(t, tc.code, a.Errors[0].Extensions["code"], "%s %s: %s", mutation, tc.name, r.body)
				assert.Equal(t, tc.field, a.Errors[0].Extensions["field"], "%s %s: %s", mutation, tc.name, r.body)
			}
		}
		for _, tc := range []struct {
			query       string
			vars        map[string]any
			code, field string
		}{
			{`mutation($c: [ID!]!) { addSegmentCustomers(segmentID: "` + vip + `", customerIDs: $c) { id } }`,
				map[string]any{"c": []string{e.ids[1], "cus_00000000000000000000000000"}}, "not_found", "customerIDs"},
			{`mutation($s: ID!) { importSegmentCustomers(segmentID: $s, cpfs: ["` + e.cpfs[1] + `"]) { added } }`,
				map[string]any{"s": "seg_\u0000"}, "validation_error", "segmentID"},
		} {
			r := apiDo(t, e.srv, http.MethodPost, "/graphql", e.token, map[string]any{"query": tc.query, "variables": tc.vars})
			a := segErrors(t, r)
			require.Len(t, a.Errors, 1, "%s", r.body)
			assert.Equal(t, tc.code, a.Errors[0].Extensions["code"], "%s", r.body)
			assert.Equal(t, tc.field, a.Errors[0].Extensions["field"], "%s", r.body)
		}
	})
}

// segErrors decodes a GraphQL answer's errors.
func segErrors(t *testing.T, r apiResp) (a struct {
	Errors []struct{ Extensions map[string]any }
}) {
	t.Helper()
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	require.NoError(t, json.Unmarshal(r.body, &a), "%s", r.body)
	return a
}
