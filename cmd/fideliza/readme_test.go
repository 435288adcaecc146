package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/openapi"
	"github.com/fideliza/fideliza/rest"
)

// readmeFile is the README, relative to this package.
const readmeFile = "../../README.md"

// bannerCalls returns what the demo's banner prints to paste under its
// numbered steps first to last: each step's first line that is not
// indented.
func bannerCalls(t *testing.T, banner string, first, last int) []string {
	t.Helper()
	var calls []string
	step := regexp.MustCompile(`^([0-9]+)\. `)
	lines := strings.Split(banner, "\n")
	for i, l := range lines {
		m := step.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		if n, _ := strconv.Atoi(m[1]); n < first || n > last {
			continue
		}
		for _, next := range lines[i+1:] {
			if next != "" && !strings.HasPrefix(next, " ") {
				calls = append(calls, next)
				break
			}
		}
	}
	require.Len(t, calls, last-first+1, "the banner's steps %d to %d:\n%s", first, last, banner)
	return calls
}

// requireBannerCallsWork runs the banner's calls, pasted as printed, in one
// bash session (curl fails on an HTTP error, pipefail carries it), and
// checks that the active campaigns they list are those the README promises,
// each with its own status active.
func requireBannerCallsWork(t *testing.T, banner string, logs *syncBuffer) {
	t.Helper()
	requireTools(t, "bash", "curl")
	calls := bannerCalls(t, banner, 1, 3)
	var steps []guideStep
	for _, c := range calls {
		steps = append(steps, guideStep{script: c + "\n"})
	}
	out, state := runGuide(t, "the demo's banner", steps, map[string]string{}, []string{"TOKEN"}, logs)
	require.NotEmpty(t, state["TOKEN"])
	require.Contains(t, out[1], `"Ana Souza"`)

	var got struct {
		Data struct {
			Campaigns struct {
				Edges []struct{ Node struct{ Name, Status string } }
			}
		}
		Errors []any
	}
	require.NoError(t, json.Unmarshal([]byte(out[2]), &got), out[2])
	require.Empty(t, got.Errors)
	var names []string
	for _, e := range got.Data.Campaigns.Edges {
		require.Equal(t, "active", e.Node.Status, "%s, listed as active", e.Node.Name)
		names = append(names, e.Node.Name)
	}
	slices.Sort(names)
	require.Equal(t, []string{"10% off in every channel", "Double points for VIPs"}, names,
		"the active campaigns the README names")
	readme := readREADME(t)
	for _, n := range names {
		require.Contains(t, readme, `"`+n+`"`, "the README names the demo's active campaigns")
	}
}

// requirePanelSignIn follows the banner's sign-in link as a browser would,
// opens the README's insights URL with the session it gives, checks that
// the link works once only, and signs in with the token of the command the
// banner prints for later.
func requirePanelSignIn(t *testing.T, base, dbURL, banner string, logs *syncBuffer) {
	t.Helper()
	link := regexp.MustCompile(regexp.QuoteMeta(base) + `/panel/sign-in\?code=\S+`).FindString(banner)
	require.NotEmpty(t, link, "the banner prints a sign-in link:\n%s", banner)
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	browser := &http.Client{Jar: jar}
	body := get(t, browser, link, http.StatusOK)
	require.Contains(t, body, "Fideliza Demo", "the link lands on the panel's home, signed in")

	body = get(t, browser, base+readmeInsightsURL(t), http.StatusOK)
	require.Contains(t, body, "Insights: Fideliza Demo")

	again := &http.Client{}
	require.Contains(t, get(t, again, link, http.StatusUnauthorized), "used already or expired")

	cmd := regexp.MustCompile(`fideliza (user token --tenant \S+ --public-url \S+)`).FindStringSubmatch(banner)
	require.NotNil(t, cmd, "the banner prints a user token command")
	token := fideliza(t, logs, dbURL, strings.Fields(cmd[1])...)["access_token"].(string)
	req, _ := http.NewRequest(http.MethodPost, base+"/panel/session", strings.NewReader("token="+token))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, "the panel accepts the printed command's token")
}

// readmeInsightsURL is the README's insights URL with its dates filled in
// as a reader would, in the demo tenant's time zone.
func readmeInsightsURL(t *testing.T) string {
	t.Helper()
	const pattern = "/panel/insights?from=<364 days ago>&to=<today>"
	require.Contains(t, readREADME(t), "`"+pattern+"`")
	loc, err := time.LoadLocation("America/Sao_Paulo")
	require.NoError(t, err)
	today := time.Now().In(loc)
	return strings.NewReplacer("<364 days ago>", today.AddDate(0, 0, -364).Format(time.DateOnly),
		"<today>", today.Format(time.DateOnly)).Replace(pattern)
}

func get(t *testing.T, c *http.Client, url string, status int) string {
	t.Helper()
	resp, err := c.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, status, resp.StatusCode, "GET %s: %s", url, b)
	return string(b)
}

func readREADME(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(readmeFile)
	require.NoError(t, err)
	return string(b)
}

// TestReadmeEndpointTable: the README's endpoint table lists every route
// the router serves and nothing else, and every operation of the OpenAPI
// documents is among them.
func TestReadmeEndpointTable(t *testing.T) {
	t.Parallel()
	listed, prefixes := readmeRoutes(t, readREADME(t))

	served := map[string]bool{}
	for key := range rest.RouteScopes {
		served[key] = true
	}
	for key := range rest.POSRoutes {
		served[key] = true
	}
	for key := range rest.PublicRoutes {
		served[key] = true
	}
	var missing []string
	for key := range served {
		if listed[key] {
			continue
		}
		method, path, _ := strings.Cut(key, " ")
		covered := false
		for _, p := range prefixes[method] {
			covered = covered || strings.HasPrefix(path, p)
		}
		if !covered {
			missing = append(missing, key)
		}
	}
	slices.Sort(missing)
	require.Empty(t, missing, "routes the README's endpoint table does not list")
	var stale []string
	for key := range listed {
		if !served[key] {
			stale = append(stale, key)
		}
	}
	slices.Sort(stale)
	require.Empty(t, stale, "routes the README's endpoint table lists but the router does not serve")

	var undocumented []string
	for _, d := range openapi.Documents() {
		doc, err := openapi.Load(d)
		require.NoError(t, err)
		for path, item := range doc.Paths.Map() {
			for method := range item.Operations() {
				if key := method + " " + path; !listed[key] {
					undocumented = append(undocumented, d.Name+": "+key)
				}
			}
		}
	}
	slices.Sort(undocumented)
	require.Empty(t, undocumented, "operations of the OpenAPI documents the README's endpoint table does not list")
}

// readmeRoutes reads the first cells of the README's endpoint table:
// `METHOD[/METHOD…] /path`, where [/segment] is served with and without it,
// a query ([?…] or ?…) is dropped, and a path ending in … stands for a
// mounted handler's pages (prefixes, by method).
func readmeRoutes(t *testing.T, readme string) (listed map[string]bool, prefixes map[string][]string) {
	t.Helper()
	_, section, ok := strings.Cut(readme, "\n## HTTP endpoints\n")
	require.True(t, ok, "the README has an HTTP endpoints section")
	section, _, _ = strings.Cut(section, "\n## ")
	listed, prefixes = map[string]bool{}, map[string][]string{}
	code := regexp.MustCompile("`([^`]+)`")
	optional := regexp.MustCompile(`\[(/[^\]]+)\]`)
	rows := 0
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if !strings.HasPrefix(line, "| `") || len(cells) < 3 {
			continue
		}
		rows++
		for _, m := range code.FindAllStringSubmatch(cells[1], -1) {
			methods, path, ok := strings.Cut(m[1], " ")
			require.True(t, ok, "%q: want METHOD /path", m[1])
			path, _, _ = strings.Cut(path, "?")
			path = strings.TrimSuffix(path, "[")
			paths := []string{path}
			if o := optional.FindStringSubmatch(path); o != nil {
				paths = []string{strings.Replace(path, o[0], "", 1), strings.Replace(path, o[0], o[1], 1)}
			}
			for _, method := range strings.Split(methods, "/") {
				require.Regexp(t, `^(GET|POST|PUT|PATCH|DELETE)$`, method, m[1])
				for _, p := range paths {
					if prefix, ok := strings.CutSuffix(p, "…"); ok {
						// Only the handlers mounted whole: each route of the
						// route table is listed on its own.
						require.Contains(t, []string{"/panel/", "/playground/"}, prefix, m[1])
						prefixes[method] = append(prefixes[method], prefix)
						continue
					}
					listed[method+" "+p] = true
				}
			}
		}
	}
	require.Greater(t, rows, 10, "the endpoint table's rows")
	return listed, prefixes
}

// TestReadmeListsEveryGuideFlagAndVariable: every guide of docs/guides is
// linked from the guides' README and from the README, and every flag of
// every command and every FIDELIZA_* variable the commands read appears in
// the README.
func TestReadmeListsEveryGuideFlagAndVariable(t *testing.T) {
	t.Parallel()
	readme := readREADME(t)
	index, err := os.ReadFile("../../docs/guides/README.md")
	require.NoError(t, err)
	guides, err := filepath.Glob("../../docs/guides/*.md")
	require.NoError(t, err)
	require.Greater(t, len(guides), 1, "the guides")
	var missing []string
	for _, g := range guides {
		name := filepath.Base(g)
		if name == "README.md" {
			continue
		}
		if !strings.Contains(string(index), "]("+name+")") {
			missing = append(missing, "docs/guides/README.md: a link to "+name)
		}
		if !strings.Contains(readme, "](docs/guides/"+name+")") {
			missing = append(missing, "README.md: a link to docs/guides/"+name)
		}
	}

	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, fs := range []*pflag.FlagSet{c.PersistentFlags(), c.LocalNonPersistentFlags()} {
			fs.VisitAll(func(f *pflag.Flag) {
				if f.Name != "help" && !regexp.MustCompile(`--`+regexp.QuoteMeta(f.Name)+`([^-\w]|$)`).MatchString(readme) {
					missing = append(missing, c.CommandPath()+" --"+f.Name)
				}
			})
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCommand(io.Discard, io.Discard))

	sources, err := filepath.Glob("*.go")
	require.NoError(t, err)
	variable := regexp.MustCompile(`"(FIDELIZA_[A-Z0-9_]+)"`)
	read := 0
	for _, s := range sources {
		if strings.HasSuffix(s, "_test.go") {
			continue
		}
		b, err := os.ReadFile(s)
		require.NoError(t, err)
		for _, m := range variable.FindAllStringSubmatch(string(b), -1) {
			read++
			if !strings.Contains(readme, "`"+m[1]+"`") {
				missing = append(missing, m[1]+" ("+s+")")
			}
		}
	}
	require.Greater(t, read, 20, "the variables the commands read")
	slices.Sort(missing)
	require.Empty(t, slices.Compact(missing), "guides not linked, flags and variables the README does not name")
}
