package rest_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/viewer"
)

// panelShoppers are the customers of the panel's segments tests: Ana and
// Caio live in Recife, Bia in Olinda.
var panelShoppers = []struct{ name, email, cpf, city string }{
	{"Ana Recifense", "ana@loja.example", "52998224725", "Recife"},
	{"Bia Olindense", "bia@loja.example", "11144477735", "Olinda"},
	{"Caio Recifense", "caio@loja.example", "39053344705", "Recife"},
}

// panelShop creates panelShoppers in f's tenant and returns their ids.
func (f *fixture) panelShop(t *testing.T) []string {
	t.Helper()
	ctx := viewer.TenantContext(context.Background(), f.tenantID)
	var ids []string
	for _, s := range panelShoppers {
		c, err := f.app.Customers.CreateCustomer(ctx, customers.CustomerInput{Name: opt.Of(s.name), Email: opt.Of(s.email),
			CPF: opt.Of(s.cpf), Address: opt.Of(customers.AddressInput{City: opt.Of(s.city), State: opt.Of("PE")})})
		require.NoError(t, err)
		ids = append(ids, c.ID)
	}
	return ids
}

// requireNoShopperData fails when page shows a shopper's name, e-mail or
// document beyond its masked form.
func requireNoShopperData(t *testing.T, page string) {
	t.Helper()
	for _, s := range panelShoppers {
		for _, personal := range []string{s.name, strings.Fields(s.name)[0], s.email, s.cpf, s.cpf[:9], s.cpf[:3] + "." + s.cpf[3:6]} {
			require.NotContains(t, page, personal, "a preview shows masked customers only")
		}
	}
}

// TestPanelSegmentsHTTP: the segments pages are panel pages; an analyst
// sees and previews but cannot save; a form from elsewhere is refused.
func TestPanelSegmentsHTTP(t *testing.T) {
	f := newFixture(t, singleDB(t))
	f.panelShop(t)
	admin := f.panelClient(t)
	admin.signIn(t, f.userToken(t, f.tenantID, viewer.RoleAdmin))
	require.Contains(t, string(admin.get(t, "/panel/").body), `<a href="/panel/segments">`)
	page := requirePanelPage(t, admin.get(t, "/panel/segments"))
	require.Contains(t, page, "No segments yet.")
	requirePanelPage(t, admin.get(t, "/panel/segments/new"))
	crafted := admin.get(t, "/panel/segments?after=seg_%00")
	require.Equal(t, http.StatusUnprocessableEntity, crafted.status, "a cursor no database stores is refused, not a 500: %s", crafted.body)

	res := admin.post(t, "/panel/segments", url.Values{"name": {"Recife"}, "rule": {`city == "Recife"`}, "action": {"save"}})
	require.Equal(t, http.StatusSeeOther, res.status, "%s", res.body)
	loc := res.header.Get("Location")
	require.True(t, strings.HasPrefix(loc, "/panel/segments/seg_"), loc)
	id := strings.TrimSuffix(strings.TrimPrefix(loc, "/panel/segments/"), "?done=segment-saved")
	page = requirePanelPage(t, admin.get(t, loc))
	require.Contains(t, page, "The segment was saved")
	require.Contains(t, page, `city == &#34;Recife&#34;</textarea>`)
	require.Equal(t, http.StatusNotFound, admin.get(t, "/panel/segments/seg_00000000000000000000000000").status)
	require.Equal(t, http.StatusForbidden, admin.post(t, "/panel/segments", url.Values{"name": {"X"}, "rule": {"purchases > 1"}, "action": {"save"}},
		"Origin", "https://evil.example").status)

	analyst := f.panelClient(t)
	analyst.signIn(t, f.userToken(t, f.tenantID, viewer.RoleAnalyst))
	page = requirePanelPage(t, analyst.get(t, "/panel/segments/"+id))
	require.NotContains(t, page, `value="save"`)
	require.Contains(t, page, `value="preview"`)
	res = analyst.post(t, "/panel/segments/"+id, url.Values{"name": {"Recife"}, "rule": {`city == "Olinda"`}, "action": {"preview"}})
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	require.Contains(t, string(res.body), "1 customers match the rule now.")
	requireNoShopperData(t, string(res.body))
	res = analyst.post(t, "/panel/segments/"+id, url.Values{"name": {"Olinda"}, "rule": {`city == "Olinda"`}, "action": {"save"}})
	require.Equal(t, http.StatusForbidden, res.status, "%s", res.body)
	require.Contains(t, string(res.body), "may look but not change anything")
}

// TestPanelSegmentsBrowser: in a browser, an admin creates an audience
// from a rule, seeing a refused rule's line and column and a preview (the
// count and masked customers) before saving, then edits its rule.
func TestPanelSegmentsBrowser(t *testing.T) {
	browser := chromiumPath(t)
	f := newFixture(t, singleDB(t))
	ids := f.panelShop(t)
	token := f.userToken(t, f.tenantID, viewer.RoleAdmin)

	tab := newBrowserTab(t, browser, f.srv.URL)
	ctx := tab.ctx
	text, submit := tab.text, tab.submit
	members := func(t *testing.T, id string) []string {
		t.Helper()
		seg, err := f.app.Customers.Segment(viewer.TenantContext(context.Background(), f.tenantID), id)
		require.NoError(t, err)
		got, err := seg.QueryCustomers().IDs(viewer.TenantContext(context.Background(), f.tenantID))
		require.NoError(t, err)
		return got
	}
	var id string

	t.Run("sign in and open the segments", func(t *testing.T) {
		require.NoError(t, chromedp.Do(ctx,
			chromedp.Navigate(f.srv.URL+"/panel/"),
			chromedp.WaitVisible(chromedp.ID("token")),
			chromedp.SetValue(chromedp.ID("token"), token),
		))
		require.EqualValues(t, http.StatusOK, submit(t, "#signin button"))
		require.EqualValues(t, http.StatusOK, submit(t, `a[href="/panel/segments"]`))
		require.Contains(t, text(t, `document.body.innerText`), "No segments yet.")
		require.EqualValues(t, http.StatusOK, submit(t, "#new-audience"))
		require.Equal(t, "New audience", text(t, `document.querySelector('h1').textContent`))
	})

	t.Run("a rule that does not type-check is shown where", func(t *testing.T) {
		require.NoError(t, chromedp.Do(ctx,
			chromedp.SetValue(chromedp.ID("segment-name"), "Moram no Recife"),
			chromedp.SetValue(chromedp.ID("segment-rule"), "purchases >= 0 &&\ncity > 3"),
		))
		require.EqualValues(t, http.StatusUnprocessableEntity, submit(t, `button[value="preview"]`))
		problem := text(t, `document.getElementById('rule-problem').innerText`)
		require.Contains(t, problem, "Line 2, column 6: found no matching overload for '_>_' applied to '(string, int)'")
		require.Contains(t, problem, "city > 3\n     ^", "the line, and a caret under the column")
		require.Equal(t, "true", text(t, `document.getElementById('segment-rule').getAttribute('aria-invalid')`))
		require.Equal(t, "purchases >= 0 &&\ncity > 3", text(t, `document.getElementById('segment-rule').value`), "the rule as typed")
		require.Equal(t, "Moram no Recife", text(t, `document.getElementById('segment-name').value`))
		require.Contains(t, text(t, `document.querySelector('[role=alert]').innerText`), "The rule was refused")
	})

	t.Run("preview, then create", func(t *testing.T) {
		require.NoError(t, chromedp.Do(ctx, chromedp.SetValue(chromedp.ID("segment-rule"), `city == "Recife"`)))
		require.EqualValues(t, http.StatusOK, submit(t, `button[value="preview"]`))
		require.Equal(t, "2 customers match the rule now.", text(t, `document.getElementById('preview-count').textContent`))
		sample := text(t, `document.getElementById('preview-sample').innerText`)
		for i, s := range panelShoppers {
			if s.city == "Recife" {
				require.Contains(t, sample, ids[i])
				require.Contains(t, sample, "***.***.***-"+s.cpf[9:])
			} else {
				require.NotContains(t, sample, ids[i])
			}
		}
		requireNoShopperData(t, text(t, `document.documentElement.outerHTML`))
		require.Equal(t, "null", text(t, `String(document.getElementById('rule-problem'))`), "the problem is gone")
		n, err := f.app.DB.Ent.Segment.Query().Count(viewer.TenantContext(context.Background(), f.tenantID))
		require.NoError(t, err)
		require.Zero(t, n, "a preview saves nothing")

		require.EqualValues(t, http.StatusOK, submit(t, `button[value="save"]`))
		require.Contains(t, text(t, `document.body.innerText`), "The segment was saved")
		id = strings.TrimPrefix(strings.TrimSuffix(text(t, `location.pathname`), "/"), "/panel/segments/")
		require.True(t, strings.HasPrefix(id, "seg_"), id)
		require.ElementsMatch(t, []string{ids[0], ids[2]}, members(t, id))
	})

	t.Run("edit the rule", func(t *testing.T) {
		require.NoError(t, chromedp.Do(ctx, chromedp.SetValue(chromedp.ID("segment-rule"), `cty == "Olinda"`)))
		require.EqualValues(t, http.StatusUnprocessableEntity, submit(t, `button[value="save"]`))
		require.Contains(t, text(t, `document.getElementById('rule-problem').innerText`), "Line 1, column 1: undeclared reference to 'cty'")
		require.ElementsMatch(t, []string{ids[0], ids[2]}, members(t, id), "a refused rule changes nothing")

		require.NoError(t, chromedp.Do(ctx,
			chromedp.SetValue(chromedp.ID("segment-rule"), `city == "Olinda"`),
			chromedp.SetValue(chromedp.ID("segment-name"), "Moram em Olinda"),
		))
		require.EqualValues(t, http.StatusOK, submit(t, `button[value="save"]`))
		require.Contains(t, text(t, `document.body.innerText`), "The segment was saved")
		require.Equal(t, "Moram em Olinda", text(t, `document.querySelector('h1').textContent`))
		require.Equal(t, []string{ids[1]}, members(t, id))

		require.EqualValues(t, http.StatusOK, submit(t, `a[href="/panel/segments"]`))
		row := text(t, `document.querySelector('#segments tbody tr').innerText`)
		require.Contains(t, row, "Moram em Olinda")
		require.Contains(t, row, "audience")
		require.Contains(t, row, `city == "Olinda"`)
	})

	t.Run("the audit trail shows the rule before and after", func(t *testing.T) {
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(f.srv.URL+"/panel/audit"), chromedp.WaitVisible(chromedp.CSS("#audit tbody tr"))))
		row := text(t, `document.querySelector('#audit tbody tr').innerText`)
		require.Contains(t, row, "segment.updated")
		require.Contains(t, row, id)
		require.Contains(t, row, `rule: city == "Recife" → city == "Olinda"`)
	})

	tab.requireNoProblems(t)
}
