package rest_test

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// singleDB opens one database: PostgreSQL when the suite has one, as in
// production, else SQLite. For the pages served by the binary, which do not
// depend on the dialect, one run is enough.
func singleDB(t *testing.T) *storage.DB {
	dialects := storagetest.Dialects()
	return storagetest.Open(t, dialects[len(dialects)-1])
}

// chromiumPath finds the browser, or skips the test without one unless
// FIDELIZA_REQUIRE_BROWSER=1 (as in CI) makes its absence a failure.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"/usr/bin/chromium", "chromium"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("FIDELIZA_REQUIRE_BROWSER") == "1" {
		t.Fatal("no Chromium at /usr/bin/chromium nor in PATH, and FIDELIZA_REQUIRE_BROWSER=1")
	}
	t.Skip("no Chromium at /usr/bin/chromium nor in PATH; install it (apt-get install chromium) or set FIDELIZA_REQUIRE_BROWSER=1 to fail instead")
	return ""
}

// browserTab is a tab of a headless Chromium that may reach only the given
// loopback servers. It records what would be a defect of the pages: a
// request to another host, an uncaught exception, a security message such
// as a Content-Security-Policy violation.
type browserTab struct {
	ctx      context.Context
	mu       sync.Mutex
	problems []string
}

// browserTimeout bounds a tab's life: every step waits on a condition, so
// only a page that never gets there meets it. Generous, for the tests must
// pass on a machine busy with other work (README's stress loop).
const browserTimeout = 5 * time.Minute

// newBrowserTab starts the browser at path (see chromiumPath) with one tab,
// which lives for browserTimeout at most and stops with the test. allowed
// are the base URLs of the servers the pages may reach.
func newBrowserTab(t *testing.T, path string, allowed ...string) *browserTab {
	t.Helper()
	var hosts []string
	for _, a := range allowed {
		u, err := url.Parse(a)
		require.NoError(t, err)
		hosts = append(hosts, u.Host)
	}
	ctx, cancel := context.WithTimeout(context.Background(), browserTimeout)
	t.Cleanup(cancel)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox, // the tests may run as root
		chromedp.DisableGPU,
		// Every host name but the test servers' fails to resolve; the
		// network events below catch what the rule could miss.
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"),
	)
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancelTab := chromedp.NewContext(ctx)
	t.Cleanup(cancelTab)

	b := &browserTab{ctx: ctx}
	// The listener runs in chromedp's event loop: it only records.
	require.NoError(t, chromedp.Listen(ctx, func(ev any) {
		var problem string
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			// data: URLs are fonts and images embedded in a stylesheet.
			if u, err := url.Parse(ev.Request.URL); err != nil || (u.Scheme != "data" && !slices.Contains(hosts, u.Host)) {
				problem = "request to another host: " + ev.Request.URL
			}
		case *runtime.EventExceptionThrown:
			problem = "uncaught exception: " + ev.ExceptionDetails.Text
			if ev.ExceptionDetails.Exception != nil {
				problem += " " + ev.ExceptionDetails.Exception.Description
			}
		case *log.EventEntryAdded:
			if ev.Entry.Source == log.EntrySourceSecurity || strings.Contains(ev.Entry.Text, "Content Security Policy") {
				problem = "security: " + ev.Entry.Text
			}
		}
		if problem != "" {
			b.mu.Lock()
			b.problems = append(b.problems, problem)
			b.mu.Unlock()
		}
	}))
	return b
}

// requireNoProblems fails the test with what the listener recorded.
func (b *browserTab) requireNoProblems(t *testing.T) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	require.Empty(t, b.problems)
}

// waitUntil waits until the JavaScript expression cond is true in the page,
// for as long as the tab lives, however slow the machine. The page checks
// it (chromedp.Poll would compile it with new Function, which the pages'
// CSP forbids); the page must not navigate meanwhile: to wait through a
// navigation, wait for an element of the page it leads to (WaitVisible).
func (b *browserTab) waitUntil(t *testing.T, cond string) {
	t.Helper()
	js := `new Promise(resolve => {
		const check = () => {
			let ok = false;
			try { ok = Boolean(` + cond + `); } catch (e) {}
			ok ? resolve(true) : setTimeout(check, 10);
		};
		check();
	})`
	_, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](js, chromedp.EvalAwaitPromise))
	require.NoError(t, err, "waiting until %s", cond)
}

// text evaluates the JavaScript expression js, a string, in the page.
func (b *browserTab) text(t *testing.T, js string) string {
	t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](js))
	require.NoError(t, err)
	return s
}

// submit clicks a form's button (or a link) and waits for the page it
// leads to, returning its status.
func (b *browserTab) submit(t *testing.T, button string) int64 {
	t.Helper()
	res, err := chromedp.RunResponse(b.ctx, chromedp.Click(chromedp.CSS(button)))
	require.NoError(t, err)
	return res.Status
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
