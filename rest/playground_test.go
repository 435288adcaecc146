package rest_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/playground"
	"github.com/fideliza/fideliza/viewer"
)

// TestPlaygroundHTTP checks the page and its assets as served by the
// router, without a browser.
func TestPlaygroundHTTP(t *testing.T) {
	t.Parallel()
	f := newFixture(t, singleDB(t))
	const (
		html      = "text/html; charset=utf-8"
		js        = "text/javascript; charset=utf-8"
		css       = "text/css; charset=utf-8"
		immutable = "public, max-age=31536000, immutable"
	)
	cases := []struct {
		method, path string
		name         string      // when method and path are not enough
		header       http.Header // sent
		status       int
		want         map[string]string // received headers
	}{
		{method: "GET", path: "/playground", status: 200, want: map[string]string{"Content-Type": html, "Cache-Control": "no-store"}},
		{method: "GET", path: "/playground/", status: 200, want: map[string]string{"Content-Type": html}},
		{method: "HEAD", path: "/playground", status: 200, want: map[string]string{"Content-Type": html}},
		{method: "GET", path: "/playground/assets/vendor/graphiql.min.js", status: 200, want: map[string]string{"Content-Type": js, "Cache-Control": immutable}},
		{method: "GET", path: "/playground/assets/vendor/graphiql.min.css", status: 200, want: map[string]string{"Content-Type": css, "Cache-Control": immutable}},
		{method: "GET", path: "/playground/assets/vendor/react.production.min.js", status: 200, want: map[string]string{"Content-Type": js}},
		{method: "GET", path: "/playground/assets/vendor/react-dom.production.min.js", status: 200, want: map[string]string{"Content-Type": js}},
		{method: "GET", path: "/playground/assets/playground.js", status: 200, want: map[string]string{"Content-Type": js}},
		{method: "HEAD", path: "/playground/assets/playground.css", status: 200, want: map[string]string{"Content-Type": css}},
		{method: "GET", path: "/playground/assets/vendor/graphiql.min.js", name: "compressed", header: http.Header{"Accept-Encoding": {"gzip"}}, status: 200,
			want: map[string]string{"Content-Type": js, "Content-Encoding": "gzip"}},
		{method: "POST", path: "/playground", status: 405},
		{method: "PUT", path: "/playground/assets/playground.js", status: 405},
		{method: "DELETE", path: "/playground/", status: 405},
		{method: "GET", path: "/playground/assets/nope.js", status: 404},
		{method: "GET", path: "/playground/assets/vendor", status: 404},
		{method: "GET", path: "/playground/assets/fetch.sh", status: 404},
		{method: "GET", path: "/playground/assets/vendor/VERSIONS", status: 404},
		{method: "GET", path: "/playground/index.html", status: 404},
	}
	for _, tc := range cases {
		t.Run(strings.TrimSpace(tc.method+" "+tc.path+" "+tc.name), func(t *testing.T) {
			req, err := http.NewRequest(tc.method, f.srv.URL+tc.path, nil)
			require.NoError(t, err)
			for k, v := range tc.header {
				req.Header[k] = v
			}
			res := do(t, http.DefaultClient, req)
			require.Equal(t, tc.status, res.status, "%s", res.body)
			for k, v := range tc.want {
				require.Equal(t, v, res.header.Get(k), k)
			}
			if tc.status == 200 {
				require.Equal(t, "nosniff", res.header.Get("X-Content-Type-Options"))
			}
		})
	}

	t.Run("page", func(t *testing.T) {
		res := do(t, http.DefaultClient, mustGet(t, f.srv.URL+"/playground"))
		require.Equal(t, http.StatusOK, res.status)
		csp := res.header.Get("Content-Security-Policy")
		for _, directive := range []string{"default-src 'self'", "script-src 'self';", "connect-src 'self'", "frame-ancestors 'none'"} {
			require.Contains(t, csp, directive)
		}
		require.NotContains(t, csp, "unsafe-eval")
		require.Equal(t, "no-referrer", res.header.Get("Referrer-Policy"))

		page := string(res.body)
		require.Contains(t, page, `<html lang="en">`)
		require.Regexp(t, `<title>[^<]+</title>`, page)
		require.Contains(t, page, `<label for="token">Access token</label>`)
		require.Contains(t, page, `<input id="token" type="password"`)
		require.NotContains(t, page, "Sign in with SSO", "no login URL is configured")
		scripts := regexp.MustCompile(`<script[^>]*>`).FindAllString(page, -1)
		require.NotEmpty(t, scripts)
		for _, s := range scripts {
			require.Contains(t, s, " src=", "an inline script would break the CSP")
		}
		require.Len(t, regexp.MustCompile(`<script[^>]*></script>`).FindAllString(page, -1), len(scripts), "a script has inline content")
		for _, u := range regexp.MustCompile(`(?i)(?:https?:)?//[^\s"'<>]+`).FindAllString(page, -1) {
			t.Errorf("the page refers to another host: %s", u)
		}

		// Every asset the page refers to is served, immutable: its URL
		// carries its version.
		refs := regexp.MustCompile(`(?:src|href)="([^"]+)"`).FindAllStringSubmatch(page, -1)
		require.Len(t, refs, 6)
		for _, ref := range refs {
			u := strings.ReplaceAll(ref[1], "&amp;", "&")
			require.Regexp(t, `^/playground/assets/[a-z./-]+\?v=[0-9a-f]{16}$`, u)
			res := do(t, http.DefaultClient, mustGet(t, f.srv.URL+u))
			require.Equal(t, http.StatusOK, res.status, u)
			require.Equal(t, "public, max-age=31536000, immutable", res.header.Get("Cache-Control"), u)
			require.NotEmpty(t, res.body)
		}
	})
}

// TestPlaygroundBrowser drives GraphiQL in headless Chromium: it opens on the
// analyst's dashboards; without a token the query is refused; with an
// analyst's token typed in, or passed in the URL fragment as the SSO callback
// and serve --demo's link do, every example tab answers, the newest customers
// the tenant's customer. The browser may reach only the test server.
//
// It does not call t.Parallel: it runs alone, before the parallel tests, so
// that the machine's load does not eat its time limit.
func TestPlaygroundBrowser(t *testing.T) {
	browser := chromiumPath(t)
	f := newFixture(t, singleDB(t))
	const customerName = "Playground Tester"
	_, err := f.app.Customers.CreateCustomer(viewer.TenantContext(context.Background(), f.tenantID), customers.CustomerInput{
		Name: opt.Of(customerName), Email: opt.Of("tester@example.com"), CPF: opt.Of("52998224725"),
	})
	require.NoError(t, err)
	token, err := f.app.Auth.IssueUserToken(sys(), f.tenantID, viewer.RoleAnalyst, "analyst", time.Hour)
	require.NoError(t, err)

	tab := newBrowserTab(t, browser, f.srv.URL)
	ctx := tab.ctx

	// response waits until GraphiQL's response pane holds want, and returns
	// its text.
	response := func(t *testing.T, want string) string {
		t.Helper()
		const pane = `(document.querySelector('.graphiql-response')?.innerText ?? '')`
		tab.waitUntil(t, pane+`.includes(`+jsString(want)+`)`)
		text, err := chromedp.Run(ctx, chromedp.Evaluate[string](pane))
		require.NoError(t, err)
		return text
	}
	execute := chromedp.Click(chromedp.CSS(".graphiql-execute-button"))
	// openTab opens the example tab of the operation op (the i-th example)
	// and waits until GraphiQL has read its operation's name: it reads it
	// 100 ms after the editor changes, and stores it; running sooner sends
	// the previous tab's name.
	openTab := func(t *testing.T, i int, op string) {
		t.Helper()
		require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(fmt.Sprintf(".graphiql-tab:nth-child(%d) .graphiql-tab-button", i+1)))))
		tab.waitUntil(t, `localStorage.getItem('graphiql:operationName') === `+jsString(op))
	}
	newest := slices.IndexFunc(playground.Examples, func(e playground.Example) bool { return strings.Contains(e.Query, "query NewestCustomers") })
	require.Positive(t, newest, "an example lists the newest customers")
	editorQuery := func(t *testing.T) string {
		t.Helper()
		q, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror.getValue()`))
		require.NoError(t, err)
		return q
	}
	start := time.Now()

	t.Run("without a token", func(t *testing.T) {
		require.NoError(t, chromedp.Do(ctx,
			chromedp.Navigate(f.srv.URL+"/playground"),
			chromedp.WaitVisible(chromedp.CSS(".graphiql-execute-button")),
			chromedp.WaitVisible(chromedp.CSS(".graphiql-query-editor .CodeMirror")),
		))
		require.True(t, strings.HasPrefix(editorQuery(t), "# Sales by store and day"), "the first example tab, a dashboard, is open")
		require.NoError(t, chromedp.Do(ctx, execute))
		response(t, "invalid_token")
	})

	t.Run("token typed in", func(t *testing.T) {
		require.NoError(t, chromedp.Do(ctx,
			chromedp.SendKeys(chromedp.ID("token"), token),
			chromedp.Click(chromedp.CSS("#token-form button")),
		))
		tab.waitUntil(t, `document.getElementById('token-status').textContent === 'Token saved for this tab.'`)
		openTab(t, newest, "NewestCustomers")
		require.NoError(t, chromedp.Do(ctx, execute))
		response(t, customerName)
	})

	t.Run("token in the fragment", func(t *testing.T) {
		// A new document: a change of fragment alone would not reload it.
		require.NoError(t, chromedp.Do(ctx,
			chromedp.Evaluate[chromedp.Void](`sessionStorage.clear()`),
			chromedp.Navigate("about:blank"),
			chromedp.Navigate(f.srv.URL+"/playground#access_token="+url.QueryEscape(token)),
			chromedp.WaitVisible(chromedp.CSS(".graphiql-execute-button")),
		))
		state, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[location.href, document.getElementById('token').value]`))
		require.NoError(t, err)
		require.Equal(t, []string{f.srv.URL + "/playground", token}, state, "the token is kept and the fragment removed")
		openTab(t, newest, "NewestCustomers")
		require.NoError(t, chromedp.Do(ctx, execute))
		response(t, customerName)
	})

	t.Run("every example", func(t *testing.T) {
		for i, e := range playground.Examples {
			op := regexp.MustCompile(`query (\w+)`).FindStringSubmatch(e.Query)[1]
			openTab(t, i, op)
			require.NoError(t, chromedp.Do(ctx, execute))
			// The answer of this tab's field, not the previous one's.
			field := regexp.MustCompile(`\{\s*(\w+)`).FindStringSubmatch(e.Query)[1]
			require.NotContains(t, response(t, `"`+field+`"`), `"errors"`, "the example %s is valid", op)
		}
	})

	t.Run("a dialog", func(t *testing.T) {
		// Radix dialogs add <style> elements: the reason for style-src
		// 'unsafe-inline' in the CSP, checked by the listener.
		require.NoError(t, chromedp.Do(ctx,
			chromedp.Click(chromedp.CSS(`[aria-label="Open settings dialog"]`)),
			chromedp.WaitVisible(chromedp.CSS(".graphiql-dialog")),
		))
	})

	t.Logf("browser steps took %s", time.Since(start).Round(10*time.Millisecond))
	tab.requireNoProblems(t)
}
