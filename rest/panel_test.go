package rest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/auth/authtest"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/rest"
	"github.com/fideliza/fideliza/viewer"
)

// userToken issues a back-office user token of tenantID, as the CLI does.
func (f *fixture) userToken(t *testing.T, tenantID string, role viewer.Role) string {
	t.Helper()
	tok, err := f.app.Auth.IssueUserToken(context.Background(), tenantID, role, "panel-"+string(role), time.Hour)
	require.NoError(t, err)
	return tok
}

// panelClient is a browser-like client of the panel: it keeps cookies,
// does not follow redirects, and sends the Origin header a browser sends
// with a form of the panel.
type panelClient struct {
	f  *fixture
	hc *http.Client
}

func (f *fixture) panelClient(t *testing.T) *panelClient {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &panelClient{f: f, hc: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

func (c *panelClient) get(t *testing.T, path string) response {
	t.Helper()
	return do(t, c.hc, mustGet(t, c.f.srv.URL+path))
}

// post sends a form with header (by default, Origin: the server's).
func (c *panelClient) post(t *testing.T, path string, form url.Values, header ...string) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.f.srv.URL+path, strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if header == nil {
		header = []string{"Origin", c.f.srv.URL}
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return do(t, c.hc, req)
}

// signIn posts token to the sign-in form and expects the session.
func (c *panelClient) signIn(t *testing.T, token string) {
	t.Helper()
	res := c.post(t, "/panel/session", url.Values{"token": {token}})
	require.Equal(t, http.StatusSeeOther, res.status, "%s", res.body)
	require.Equal(t, "/panel/", res.header.Get("Location"))
}

// requirePanelPage checks what every page of the panel has: security
// headers, no caching, and the landmarks of an accessible page.
func requirePanelPage(t *testing.T, res response) string {
	t.Helper()
	require.Equal(t, "text/html; charset=utf-8", res.header.Get("Content-Type"))
	require.Equal(t, "no-store", res.header.Get("Cache-Control"))
	require.Equal(t, "nosniff", res.header.Get("X-Content-Type-Options"))
	csp := res.header.Get("Content-Security-Policy")
	for _, directive := range []string{"default-src 'self'", "script-src 'self';", "style-src 'self';", "form-action 'self'", "frame-ancestors 'none'", "base-uri 'none'"} {
		require.Contains(t, csp, directive)
	}
	page := string(res.body)
	require.Contains(t, page, `<html lang="en">`)
	require.Regexp(t, `<title>[^<]+</title>`, page)
	require.Contains(t, page, `<main id="main">`)
	require.Regexp(t, `<h1>[^<]+</h1>`, page)
	for _, s := range regexp.MustCompile(`<script[^>]*>[^<]*</script>`).FindAllString(page, -1) {
		require.Regexp(t, `^<script src="/panel/assets/[a-z]+\.js\?v=[0-9a-f]{16}" defer></script>$`, s, "an inline script would break the CSP")
	}
	for _, u := range regexp.MustCompile(`(?i)(?:https?:)?//[^\s"'<>]+`).FindAllString(page, -1) {
		if !strings.HasPrefix(u, "http://127.0.0.1:") { // the issuer, in the curl example
			t.Errorf("the page refers to another host: %s", u)
		}
	}
	// Every input but hidden ones has a label.
	for _, m := range regexp.MustCompile(`<(?:input|textarea)[^>]*>`).FindAllString(page, -1) {
		if strings.Contains(m, `type="hidden"`) {
			continue
		}
		id := regexp.MustCompile(`id="([^"]+)"`).FindStringSubmatch(m)
		require.NotNil(t, id, "an input without id cannot be labelled: %s", m)
		require.Contains(t, page, `<label for="`+id[1]+`">`, "input %s has no label", id[1])
	}
	return page
}

// TestPanelHTTP drives the panel's pages and forms without a browser.
func TestPanelHTTP(t *testing.T) {
	t.Parallel()
	f := newFixture(t, singleDB(t))
	admin := f.userToken(t, f.tenantID, viewer.RoleAdmin)

	t.Run("the sign-in page", func(t *testing.T) {
		res := f.panelClient(t).get(t, "/panel/")
		require.Equal(t, http.StatusOK, res.status)
		page := requirePanelPage(t, res)
		require.Equal(t, "same-origin", res.header.Get("Referrer-Policy"), "no-referrer would make browsers send Origin: null")
		require.Contains(t, page, `<form id="signin" method="post" action="/panel/session">`)
		require.Contains(t, page, `<label for="token">`)
		require.Contains(t, page, "fideliza user token --tenant &lt;id&gt;")
		require.NotContains(t, page, "Sign in with SSO", "no provider is configured")
		require.NotContains(t, page, "<script", "the sign-in page needs no script")
		require.Equal(t, http.StatusOK, f.panelClient(t).get(t, "/panel").status)
	})
	t.Run("the SSO page and the assets", func(t *testing.T) {
		res := f.panelClient(t).get(t, "/panel/sso")
		require.Equal(t, http.StatusOK, res.status)
		page := requirePanelPage(t, res)
		refs := regexp.MustCompile(`(?:src|href)="(/panel/assets/[^"]+)"`).FindAllStringSubmatch(page, -1)
		require.Len(t, refs, 2, "the stylesheet and sso.js")
		for _, ref := range refs {
			res := f.panelClient(t).get(t, strings.ReplaceAll(ref[1], "&amp;", "&"))
			require.Equal(t, http.StatusOK, res.status, ref[1])
			require.Equal(t, "public, max-age=31536000, immutable", res.header.Get("Cache-Control"))
			require.Regexp(t, `^text/(css|javascript); charset=utf-8$`, res.header.Get("Content-Type"))
		}
		require.Equal(t, http.StatusNotFound, f.panelClient(t).get(t, "/panel/assets/nope.js").status)
	})

	t.Run("forms from elsewhere are refused", func(t *testing.T) {
		c := f.panelClient(t)
		form := url.Values{"token": {admin}}
		for name, header := range map[string][]string{
			"no Origin nor Referer":                {},
			"another Origin":                       {"Origin", "http://evil.example"},
			"Origin null":                          {"Origin", "null"},
			"another Referer":                      {"Referer", "http://evil.example/panel/"},
			"Origin of another port, same Referer": {"Origin", "http://127.0.0.1:1", "Referer", f.srv.URL + "/panel/"},
		} {
			res := c.post(t, "/panel/session", form, header...)
			require.Equal(t, http.StatusForbidden, res.status, name)
			require.Contains(t, string(res.body), "did not come from the panel", name)
			require.Empty(t, res.header.Values("Set-Cookie"), name)
		}
		res := c.post(t, "/panel/session", form, "Referer", f.srv.URL+"/panel/")
		require.Equal(t, http.StatusSeeOther, res.status, "a Referer of this host will do: %s", res.body)
		// Signed in, a form from elsewhere is still refused.
		sb := c.post(t, "/panel/sandboxes", nil, "Origin", "http://evil.example")
		require.Equal(t, http.StatusForbidden, sb.status)
	})

	t.Run("tokens the panel refuses", func(t *testing.T) {
		c := f.panelClient(t)
		client := f.token(t, f.client(t, apiclient.KindOauth), "")
		for token, want := range map[string]string{
			"":                        "Paste a token",
			"garbage":                 "The token was not accepted",
			admin + "x":               "The token was not accepted",
			client:                    "an API client&#39;s token",
			strings.Repeat("a", 5000): "too long",
		} {
			res := c.post(t, "/panel/session", url.Values{"token": {token}})
			require.Equal(t, http.StatusUnauthorized, res.status)
			page := requirePanelPage(t, res)
			require.Contains(t, page, want)
			require.Contains(t, page, `<form id="signin"`, "the sign-in page again")
			require.Empty(t, res.header.Values("Set-Cookie"))
		}
	})

	t.Run("an admin signs in, works and signs out", func(t *testing.T) {
		c := f.panelClient(t)
		res := c.post(t, "/panel/session", url.Values{"token": {"Bearer " + admin + "\n"}})
		require.Equal(t, http.StatusSeeOther, res.status, "%s", res.body)
		cookie := res.header.Get("Set-Cookie")
		for _, attr := range []string{"Path=/panel", "HttpOnly", "SameSite=Strict"} {
			require.Contains(t, cookie, attr)
		}
		require.NotContains(t, cookie, "Secure", "plain HTTP")

		res = c.get(t, "/panel/")
		require.Equal(t, http.StatusOK, res.status)
		page := requirePanelPage(t, res)
		require.Contains(t, page, "Your tenants")
		require.Contains(t, page, f.tenantID)
		require.Contains(t, page, "No sandboxes yet.")
		require.Contains(t, page, "No deliveries yet.")
		require.Contains(t, page, `<form id="create-sandbox"`)

		res = c.post(t, "/panel/sandboxes", url.Values{"name": {strings.Repeat("n", 201)}})
		require.Equal(t, http.StatusUnprocessableEntity, res.status)
		require.Contains(t, requirePanelPage(t, res), "longer than 200")

		res = c.post(t, "/panel/sandboxes", url.Values{"name": {"  Testes <b>  "}})
		require.Equal(t, http.StatusSeeOther, res.status, "%s", res.body)
		loc := res.header.Get("Location")
		require.Regexp(t, `^/panel/sandboxes/[^/?]+\?done=sandbox-created$`, loc)
		sbPath, _, _ := strings.Cut(loc, "?")
		res = c.get(t, loc)
		require.Equal(t, http.StatusOK, res.status)
		page = requirePanelPage(t, res)
		require.Contains(t, page, "The sandbox is ready")
		require.Contains(t, page, "Sandbox: Testes &lt;b&gt;")
		require.Contains(t, page, "No credentials yet.")

		res = c.post(t, sbPath+"/clients", url.Values{"kind": {"admin"}})
		require.Equal(t, http.StatusUnprocessableEntity, res.status)
		require.Contains(t, requirePanelPage(t, res), "Choose OAuth or POS")

		res = c.post(t, sbPath+"/clients", url.Values{"kind": {"pos"}, "name": {"Caixa"}})
		require.Equal(t, http.StatusCreated, res.status, "%s", res.body)
		page = requirePanelPage(t, res)
		first := regexp.MustCompile(`<code id="client-secret">([^<]+)</code>`).FindStringSubmatch(page)
		clientID := regexp.MustCompile(`<code id="client-id">([^<]+)</code>`).FindStringSubmatch(page)
		require.NotNil(t, first)
		require.NotNil(t, clientID)
		require.Contains(t, page, "will not be shown again")

		res = c.post(t, sbPath+"/clients/"+clientID[1]+"/rotate", nil)
		require.Equal(t, http.StatusOK, res.status, "%s", res.body)
		page = requirePanelPage(t, res)
		second := regexp.MustCompile(`<code id="client-secret">([^<]+)</code>`).FindStringSubmatch(page)
		require.NotNil(t, second)
		require.NotEqual(t, first[1], second[1])
		require.Contains(t, page, "previous secret no longer works")
		require.Equal(t, http.StatusNotFound, c.post(t, sbPath+"/clients/cli_nope/rotate", nil).status)

		for _, path := range []string{"/panel/", sbPath} {
			page := string(c.get(t, path).body)
			require.NotContains(t, page, first[1])
			require.NotContains(t, page, second[1])
		}
		require.Contains(t, string(c.get(t, sbPath).body), clientID[1], "the client is listed")

		res = c.post(t, sbPath+"/reset", nil)
		require.Equal(t, http.StatusUnprocessableEntity, res.status, "the confirmation is required")
		require.Contains(t, requirePanelPage(t, res), "Tick the box")
		res = c.post(t, sbPath+"/reset", url.Values{"confirm": {"yes"}})
		require.Equal(t, http.StatusSeeOther, res.status, "%s", res.body)
		require.Equal(t, sbPath+"?done=sandbox-reset", res.header.Get("Location"))

		res = c.post(t, "/panel/logout", nil)
		require.Equal(t, http.StatusSeeOther, res.status)
		require.Equal(t, "/panel/?done=signed-out", res.header.Get("Location"))
		require.Contains(t, res.header.Get("Set-Cookie"), "Max-Age=0")
		res = c.get(t, "/panel/?done=signed-out")
		require.Equal(t, http.StatusOK, res.status)
		require.Contains(t, string(res.body), "You signed out.")
		require.Contains(t, string(res.body), `<form id="signin"`)
	})

	t.Run("an invalid session shows the sign-in page", func(t *testing.T) {
		c := f.panelClient(t)
		c.signIn(t, admin)
		u, _ := url.Parse(f.srv.URL + "/panel/")
		cookies := c.hc.Jar.Cookies(u)
		require.Len(t, cookies, 1)
		c.hc.Jar.SetCookies(u, []*http.Cookie{{Name: cookies[0].Name, Value: admin[:len(admin)-4] + "AAAA", Path: "/panel"}})
		res := c.get(t, "/panel/")
		require.Equal(t, http.StatusOK, res.status)
		page := requirePanelPage(t, res)
		require.Contains(t, page, "Your session has ended")
		require.Contains(t, page, `<form id="signin"`)
		require.Contains(t, res.header.Get("Set-Cookie"), "Max-Age=0", "the cookie is cleared")

		// Without a session, another page shows the sign-in form, which
		// comes back to it.
		res = f.panelClient(t).get(t, "/panel/sandboxes/ten_x")
		require.Equal(t, http.StatusUnauthorized, res.status)
		require.Contains(t, string(res.body), `<input type="hidden" name="next" value="/panel/sandboxes/ten_x">`)
		res = f.panelClient(t).post(t, "/panel/session", url.Values{"token": {admin}, "next": {"/panel/sandboxes/ten_x"}})
		require.Equal(t, "/panel/sandboxes/ten_x", res.header.Get("Location"))
		for _, next := range []string{"https://evil.example/panel/", "//evil.example/panel/", "/playground", "/panel/../auth/token"} {
			res = f.panelClient(t).post(t, "/panel/session", url.Values{"token": {admin}, "next": {next}})
			require.Equal(t, "/panel/", res.header.Get("Location"), next)
		}
	})

	t.Run("an analyst looks but does not change", func(t *testing.T) {
		c := f.panelClient(t)
		c.signIn(t, f.userToken(t, f.tenantID, viewer.RoleAnalyst))
		res := c.get(t, "/panel/")
		require.Equal(t, http.StatusOK, res.status)
		page := requirePanelPage(t, res)
		require.Contains(t, page, "Your tenants")
		require.Contains(t, page, "(analyst)")
		require.NotContains(t, page, `<form id="create-sandbox"`)

		before, err := f.app.DB.Ent.Tenant.Query().Count(sys())
		require.NoError(t, err)
		res = c.post(t, "/panel/sandboxes", url.Values{"name": {"Nope"}})
		require.Equal(t, http.StatusForbidden, res.status)
		page = requirePanelPage(t, res)
		require.Contains(t, page, "signed in as an analyst, who may look but not change anything")
		require.Contains(t, page, "Your tenants", "the home page again, with the message")
		after, err := f.app.DB.Ent.Tenant.Query().Count(sys())
		require.NoError(t, err)
		require.Equal(t, before, after)

		// The admin's sandbox: visible, not changeable.
		tenants, err := f.app.Backoffice.ManagedTenants(adminContext(f.tenantID))
		require.NoError(t, err)
		require.Greater(t, len(tenants), 1)
		sbPath := "/panel/sandboxes/" + tenants[1].ID
		res = c.get(t, sbPath)
		require.Equal(t, http.StatusOK, res.status)
		require.NotContains(t, string(res.body), `<form id="create-client"`)
		for path, form := range map[string]url.Values{
			sbPath + "/clients": {"kind": {"oauth"}},
			sbPath + "/reset":   {"confirm": {"yes"}},
		} {
			res = c.post(t, path, form)
			require.Equal(t, http.StatusForbidden, res.status, path)
			require.Contains(t, string(res.body), "who may look but not change anything", path)
		}
	})

	t.Run("programme settings", func(t *testing.T) {
		// A tenant of its own: the other subtests read the shared one's.
		tn, err := f.app.Backoffice.CreateTenant(viewer.SystemContext(context.Background()), "Programa", nil)
		require.NoError(t, err)
		c := f.panelClient(t)
		c.signIn(t, f.userToken(t, tn.ID, viewer.RoleAdmin))
		res := c.get(t, "/panel/settings")
		require.Equal(t, http.StatusOK, res.status)
		page := requirePanelPage(t, res)
		require.Contains(t, page, `<form id="settings" method="post" action="/panel/settings">`)
		for _, field := range []string{`id="time_zone" name="time_zone" value="America/Sao_Paulo"`, `id="points_pending_days" name="points_pending_days" value="0"`,
			`id="level_grace_days" name="level_grace_days" value="0"`, `id="silver_threshold" name="silver_threshold" value="1000"`,
			`id="churn_refit_days" name="churn_refit_days" value="7"`} {
			require.Contains(t, page, field)
		}
		require.Contains(t, string(c.get(t, "/panel/").body), `<a href="/panel/settings">`)

		// Refused changes name the problem, keep what was typed and change nothing.
		for _, refused := range []struct {
			form url.Values
			msg  string
		}{
			{url.Values{"time_zone": {"Mars/Olympus"}}, "Time zone: must be an IANA time zone such as America/Sao_Paulo."},
			{url.Values{"silver_threshold": {"9000"}}, "the level thresholds must rise strictly"},
			{url.Values{"points_pending_days": {"sete"}}, "Points pending for (days): &#34;sete&#34; is not a number."},
		} {
			res := c.post(t, "/panel/settings", refused.form)
			require.Equal(t, http.StatusUnprocessableEntity, res.status, "%s", res.body)
			page := requirePanelPage(t, res)
			require.Contains(t, page, refused.msg)
			for name, v := range refused.form {
				require.Contains(t, page, `name="`+name+`" value="`+v[0]+`"`, "what was typed is kept")
			}
		}
		res = c.post(t, "/panel/settings", url.Values{"time_zone": {"America/Manaus"}, "points_pending_days": {"7"},
			"level_grace_days": {"30"}, "gold_threshold": {"4000"}, "silver_threshold": {"1000"}})
		require.Equal(t, http.StatusSeeOther, res.status, "%s", res.body)
		require.Equal(t, "/panel/settings?done=settings-saved", res.header.Get("Location"))
		page = requirePanelPage(t, c.get(t, res.header.Get("Location")))
		require.Contains(t, page, "The settings were saved")
		require.Contains(t, page, `name="time_zone" value="America/Manaus"`)
		stored, err := f.app.DB.Ent.Tenant.Get(viewer.SystemContext(context.Background()), tn.ID)
		require.NoError(t, err)
		require.Equal(t, []any{"America/Manaus", 7, 30, int64(4000), int64(1000), 12}, []any{stored.TimeZone, stored.PointsPendingDays,
			stored.LevelGraceDays, stored.GoldThreshold, stored.SilverThreshold, stored.PointsExpiryMonths})

		// A level's own share of a sale payable with points, then back to the programme's.
		for _, gold := range []string{"0.8", ""} {
			res = c.post(t, "/panel/settings", url.Values{"points_spend_max_share_gold": {gold}})
			require.Equal(t, http.StatusSeeOther, res.status, "%s", res.body)
			require.Contains(t, requirePanelPage(t, c.get(t, res.header.Get("Location"))), `name="points_spend_max_share_gold" value="`+gold+`"`)
			stored, err = f.app.DB.Ent.Tenant.Get(viewer.SystemContext(context.Background()), tn.ID)
			require.NoError(t, err)
			if gold == "" {
				require.Nil(t, stored.PointsSpendMaxShareGold, "back to the programme's share")
			} else {
				require.Equal(t, gold, stored.PointsSpendMaxShareGold.String())
			}
		}

		// The rules of cashback spent: shown with their defaults, changed, and spending turned off.
		require.Contains(t, page, `name="cashback_spend_channels" value="ecommerce,pdv"`)
		res = c.post(t, "/panel/settings", url.Values{"cashback_spend_channels": {""}, "cashback_spend_max_share": {"0.1"},
			"cashback_spend_min": {"5"}})
		require.Equal(t, http.StatusSeeOther, res.status, "%s", res.body)
		page = requirePanelPage(t, c.get(t, res.header.Get("Location")))
		require.Contains(t, page, `name="cashback_spend_min" value="5.00"`)
		stored, err = f.app.DB.Ent.Tenant.Get(viewer.SystemContext(context.Background()), tn.ID)
		require.NoError(t, err)
		require.Equal(t, []any{[]string{}, "0.1", "5"}, []any{stored.CashbackSpendChannels, stored.CashbackSpendMaxShare.String(),
			stored.CashbackSpendMin.String()})

		// An analyst reads them and cannot change them.
		analyst := f.panelClient(t)
		analyst.signIn(t, f.userToken(t, tn.ID, viewer.RoleAnalyst))
		page = requirePanelPage(t, analyst.get(t, "/panel/settings"))
		require.Contains(t, page, `name="time_zone" value="America/Manaus" maxlength="64" aria-describedby="time_zone-hint" readonly>`)
		require.NotContains(t, page, "Save settings")
		res = analyst.post(t, "/panel/settings", url.Values{"time_zone": {"UTC"}})
		require.Equal(t, http.StatusForbidden, res.status, "%s", res.body)
		require.Contains(t, string(res.body), "who may look but not change anything")
	})

	t.Run("another tenant's sandbox is not found", func(t *testing.T) {
		other, err := f.app.Backoffice.CreateTenant(sys(), "Outra Loja", nil)
		require.NoError(t, err)
		theirs, err := f.app.Backoffice.CreateSandbox(adminContext(other.ID), "Deles")
		require.NoError(t, err)
		c := f.panelClient(t)
		c.signIn(t, admin)
		for _, id := range []string{theirs.ID, other.ID, f.tenantID, "ten_nope"} {
			res := c.get(t, "/panel/sandboxes/"+id)
			require.Equal(t, http.StatusNotFound, res.status, id)
			require.Contains(t, requirePanelPage(t, res), "Sandbox not found")
		}
		for path, form := range map[string]url.Values{
			"/clients":                 {"kind": {"oauth"}},
			"/reset":                   {"confirm": {"yes"}},
			"/clients/cli_nope/rotate": nil,
		} {
			res := c.post(t, "/panel/sandboxes/"+theirs.ID+path, form)
			require.Equal(t, http.StatusNotFound, res.status, path)
		}
		clients, err := f.app.Backoffice.SandboxClients(adminContext(other.ID), theirs.ID)
		require.NoError(t, err)
		require.Empty(t, clients)
	})
}

// adminContext acts as an admin user of tenantID.
func adminContext(tenantID string) context.Context {
	return viewer.NewContext(context.Background(), viewer.Viewer{Role: viewer.RoleAdmin, TenantID: tenantID,
		Subject: "user:test", Scopes: auth.RoleScopes(viewer.RoleAdmin)})
}

// TestPanelBrowser drives the panel in headless Chromium: an admin pastes a
// token, creates a sandbox and OAuth credentials, and reads the secret
// once; the credentials then reach the sandbox's demo data and nothing of
// production. After signing out, an analyst signs in with SSO. The browser
// may reach only the test server and the fake provider.
//
// It does not call t.Parallel: it runs alone, before the parallel tests, so
// that the machine's load does not eat its time limit.
func TestPanelBrowser(t *testing.T) {
	browser := chromiumPath(t)
	const clientID = "fideliza-panel"
	idp := authtest.NewProvider(t)
	f := newFixture(t, singleDB(t), func(a *rest.ServerSetup) {
		require.NoError(t, a.Auth.UseOIDC(context.Background(), auth.OIDCConfig{
			Issuer: idp.URL, Audience: clientID, ClientID: clientID,
		}))
	})
	const productionName = "Cliente de Produção"
	production, err := f.app.Customers.CreateCustomer(viewer.TenantContext(context.Background(), f.tenantID), customers.CustomerInput{
		Name: opt.Of(productionName), Email: opt.Of("producao@example.com"), CPF: opt.Of("52998224725"),
	})
	require.NoError(t, err)
	token := f.userToken(t, f.tenantID, viewer.RoleAdmin)

	tab := newBrowserTab(t, browser, f.srv.URL, idp.URL)
	ctx := tab.ctx
	text, submit := tab.text, tab.submit
	start := time.Now()
	var sandboxID, clientIDSeen, secret string

	t.Run("sign in with a pasted token", func(t *testing.T) {
		require.NoError(t, chromedp.Do(ctx,
			chromedp.Navigate(f.srv.URL+"/panel/"),
			chromedp.WaitVisible(chromedp.ID("token")),
			chromedp.SetValue(chromedp.ID("token"), token),
		))
		require.Contains(t, text(t, `document.body.innerText`), "Sign in with SSO")
		require.EqualValues(t, http.StatusOK, submit(t, "#signin button"))
		page := text(t, `document.body.innerText`)
		require.Contains(t, page, "Your tenants")
		require.Contains(t, page, "Loja Teste")
		require.Contains(t, page, f.tenantID)
		require.Equal(t, f.srv.URL+"/panel/", text(t, `location.href`))
	})

	t.Run("create a sandbox", func(t *testing.T) {
		require.EqualValues(t, http.StatusOK, submit(t, "#create-sandbox button"))
		require.Contains(t, text(t, `document.body.innerText`), "The sandbox is ready")
		sandboxID = text(t, `document.getElementById('sandbox-id').textContent`)
		require.NotEmpty(t, sandboxID)
		require.Equal(t, f.srv.URL+"/panel/sandboxes/"+sandboxID+"?done=sandbox-created", text(t, `location.href`))
	})

	t.Run("create OAuth credentials and read the secret once", func(t *testing.T) {
		require.EqualValues(t, http.StatusCreated, submit(t, `#create-client button[value="oauth"]`))
		require.Contains(t, text(t, `document.body.innerText`), "will not be shown again")
		clientIDSeen = text(t, `document.getElementById('client-id').textContent`)
		secret = text(t, `document.getElementById('client-secret').textContent`)
		require.NotEmpty(t, clientIDSeen)
		require.NotEmpty(t, secret)
		require.Equal(t, sandboxID, text(t, `document.getElementById('tenant-id').textContent`))

		for _, path := range []string{"/panel/", "/panel/sandboxes/" + sandboxID} {
			require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(f.srv.URL+path)))
			html := text(t, `document.documentElement.outerHTML`)
			require.NotContains(t, html, secret, "%s shows the secret again", path)
		}
		require.Contains(t, text(t, `document.body.innerText`), clientIDSeen, "the sandbox page lists the client")
	})

	t.Run("read the audit trail", func(t *testing.T) {
		admin := viewer.NewContext(context.Background(), viewer.Viewer{Role: viewer.RoleAdmin, TenantID: f.tenantID, Subject: "ana@loja.example"})
		_, err := f.app.Backoffice.UpdateTenant(admin, f.tenantID, backoffice.TenantSettings{LevelGraceDays: opt.Of(15).Ptr()})
		require.NoError(t, err)
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(f.srv.URL+"/panel/"),
			chromedp.Click(chromedp.CSS(`a[href="/panel/audit"]`)), chromedp.WaitVisible(chromedp.CSS("#audit tbody tr"))))
		row := text(t, `document.querySelector('#audit tbody tr').innerText`)
		require.Contains(t, row, "ana@loja.example (user)")
		require.Contains(t, row, "tenant_settings.updated")
		require.Contains(t, row, "level_grace_days")
	})

	t.Run("sign out", func(t *testing.T) {
		require.EqualValues(t, http.StatusOK, submit(t, "header form button"))
		require.Contains(t, text(t, `document.body.innerText`), "You signed out.")
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(f.srv.URL+"/panel/sandboxes/"+sandboxID)))
		require.Equal(t, "Sign in", text(t, `document.querySelector('h1').textContent`))
	})

	t.Run("an analyst signs in with SSO", func(t *testing.T) {
		idp.SignInAs(map[string]any{"sub": "bia@loja.example", "tenant_id": f.tenantID, "role": "analyst"})
		// The provider redirects back to /panel/sso#access_token=…, whose
		// script posts the token; the answer leads to the home page, the
		// only one of these with the list of tenants. Reading the page
		// sooner could read one of the pages on the way, or a page that
		// goes away while it is read.
		require.NoError(t, chromedp.Do(ctx,
			chromedp.Navigate(f.srv.URL+"/panel/"),
			chromedp.Click(chromedp.CSS(`a[href="/auth/login?return_to=/panel/sso"]`)),
			chromedp.WaitVisible(chromedp.ID("tenants")),
		))
		page := text(t, `document.body.innerText`)
		require.Contains(t, page, "Your tenants")
		require.Contains(t, page, "bia@loja.example (analyst)")
		require.Contains(t, page, "may look but not change anything")
		require.Equal(t, f.srv.URL+"/panel/", text(t, `location.href`), "no token left in the address")
		require.Equal(t, "none", text(t, `document.getElementById('create-sandbox') ? 'form' : 'none'`))
		require.Equal(t, "none", text(t, `document.querySelector('a[href="/panel/audit"]') ? 'link' : 'none'`))
		res, err := chromedp.RunResponse(ctx, chromedp.Navigate(f.srv.URL+"/panel/audit"))
		require.NoError(t, err)
		require.EqualValues(t, http.StatusForbidden, res.Status, "the audit trail is an administrator's")
	})

	t.Logf("browser steps took %s", time.Since(start).Round(10*time.Millisecond))
	tab.requireNoProblems(t)
	if t.Failed() {
		return
	}

	// The credentials read from the page obtain a token of the sandbox,
	// which reads its demo customers and nothing of production.
	res := f.requestToken(t, url.Values{"grant_type": {"client_credentials"}}, clientIDSeen, secret)
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	access, _ := res.json(t)["access_token"].(string)
	require.NotEmpty(t, access)
	bearer := func(path string) response {
		req := mustGet(t, f.srv.URL+path)
		req.Header.Set("Authorization", "Bearer "+access)
		return do(t, http.DefaultClient, req)
	}
	res = bearer("/v1/customers?limit=100")
	require.Equal(t, http.StatusOK, res.status, "%s", res.body)
	var list struct {
		Data       []struct{ ID, Name string }
		Pagination struct{ Total int }
	}
	require.NoError(t, json.Unmarshal(res.body, &list))
	demo, err := f.app.DB.Ent.Customer.Query().Count(viewer.TenantContext(context.Background(), sandboxID))
	require.NoError(t, err)
	require.Positive(t, demo, "the sandbox has the demo data")
	require.Equal(t, demo, list.Pagination.Total)
	require.Len(t, list.Data, min(demo, 100))
	for _, c := range list.Data {
		require.NotEqual(t, production.ID, c.ID)
		require.NotEqual(t, productionName, c.Name)
	}
	require.Equal(t, http.StatusNotFound, bearer("/v1/customers/"+production.ID).status, "production is out of the sandbox's reach")
}
