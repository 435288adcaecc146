package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/demoyear/demotest"
	"github.com/fideliza/fideliza/domain/webhook"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// guidesDir holds the getting-started guides, relative to this package.
const guidesDir = "../../docs/guides"

// guideTimeout bounds one guide's calls: each takes a few seconds, most of
// them waiting for River (sale processing, webhook dispatch), but a CI
// machine running every package's tests at once has made a guide's job wait
// past 30 s.
const guideTimeout = 3 * time.Minute

// envRequireTools makes a missing curl or jq fail the guide tests instead of
// skipping them (CI sets it).
const envRequireTools = "FIDELIZA_REQUIRE_TOOLS"

// TestGuides runs the sh blocks of every getting-started guide, in order and
// in one bash session, against `serve --demo` on a fresh database: a call
// answered with an HTTP error (curl -f), a failed assertion of the guide,
// or an answer that differs from the one the guide shows after the call
// (compareAnswers) fails the test.
func TestGuides(t *testing.T) {
	t.Parallel()
	requireTools(t, "bash", "curl", "jq")
	guides := []struct {
		file string
		// webhook starts a receiver on 127.0.0.1, exported as WEBHOOK_URL,
		// and lets serve deliver to it.
		webhook bool
	}{
		{file: "pos-v1.md"},
		{file: "ecommerce.md", webhook: true},
		{file: "crm-sync.md"},
		{file: "pos-interface.md"},
		{file: "returns.md"},
		{file: "predictive-v2.md"},
		{file: "campaigns-for-chains.md"},
		{file: "audiences-and-experiments.md"},
		{file: "points-at-the-till.md"},
		{file: "cashback-and-gift-cards.md"},
	}
	files, err := filepath.Glob(filepath.Join(guidesDir, "*.md"))
	require.NoError(t, err)
	var listed []string
	for _, g := range guides {
		listed = append(listed, filepath.Join(guidesDir, g.file))
	}
	var unlisted []string
	for _, f := range files {
		if filepath.Base(f) != "README.md" && !slices.Contains(listed, f) {
			unlisted = append(unlisted, f)
		}
	}
	require.Empty(t, unlisted, "every guide must be run by this test: add it to the list")

	// The demo's year is generated once per database (demotest); each
	// guide's serve --demo starts on a copy of it, as a reader's second
	// start would.
	for _, d := range storagetest.Dialects() {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			for _, g := range guides {
				t.Run(strings.TrimSuffix(g.file, ".md"), func(t *testing.T) {
					t.Parallel()
					raw, err := os.ReadFile(filepath.Join(guidesDir, g.file))
					require.NoError(t, err)
					steps := parseGuide(t, string(raw))
					require.NotEmpty(t, steps, "%s has no sh block", g.file)

					logs := &syncBuffer{}
					args := []string{"--demo"}
					env := map[string]string{}
					var hooks *hookReceiver
					if g.webhook {
						hooks = newHookReceiver(t)
						args = append(args, "--webhook-allow-loopback")
						env["WEBHOOK_URL"] = hooks.url + "/webhooks/fideliza"
					}
					u := demotest.URL(t, d, demotest.Today())
					base, stdout := startServe(t, logs, u, args...)
					env["BASE"] = base
					env["TENANT"] = app.DemoTenantID
					env["CLIENT_ID"] = app.DemoOAuthClient
					env["CLIENT_SECRET"] = between(t, stdout.String(), app.DemoOAuthClient+"  secret ", "\n")
					env["POS_ID"] = app.DemoPOSClient
					env["POS_SECRET"] = between(t, stdout.String(), app.DemoPOSClient+"  secret ", "\n")

					var keep []string
					if hooks != nil {
						keep = append(keep, "WEBHOOK_SECRET")
					}
					outputs, state := runGuide(t, g.file, steps, env, keep, logs)
					requireAnswers(t, g.file, steps, outputs)

					if hooks != nil {
						hooks.requireSigned(t, state["WEBHOOK_SECRET"], "customer.level_changed")
					}
					for _, s := range steps {
						for _, a := range s.answers {
							switch {
							case !a.webhook:
							case hooks == nil:
								t.Errorf("%s, line %d: a webhook sample, but the test runs the guide without a receiver", g.file, a.line)
							default:
								for _, p := range hooks.compare(a) {
									t.Errorf("%s, a webhook: %s", g.file, p)
								}
							}
						}
					}
					requireNoClearDocuments(t, u, string(raw))
				})
			}
		})
	}
}

// requireTools skips the test when a tool the guides need is missing,
// unless FIDELIZA_REQUIRE_TOOLS=1.
func requireTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv(envRequireTools) == "1" {
				t.Fatalf("%s is not installed; the guides' calls need bash, curl and jq", tool)
			}
			t.Skipf("%s is not installed: the guides' calls need bash, curl and jq (set %s=1 to fail instead)", tool, envRequireTools)
		}
	}
}

var fence = regexp.MustCompile("^```([A-Za-z0-9_-]*)\\s*$")

// guideStep is an sh block of a guide and the sample answers shown after
// it (see guideanswer_test.go).
type guideStep struct {
	script  string
	answers []sampleAnswer
}

// parseGuide returns the sh blocks of a guide, in order, each with the
// json and text blocks that follow it up to the next sh block.
func parseGuide(t *testing.T, md string) []guideStep {
	t.Helper()
	var steps []guideStep
	var lang string
	var body strings.Builder
	var next *sampleAnswer // the directive of the next sample, if any
	open := false
	sc := bufio.NewScanner(strings.NewReader(md))
	line := 0
	start := 0
	for sc.Scan() {
		line++
		m := fence.FindStringSubmatch(sc.Text())
		switch {
		case m != nil && !open:
			open, lang, start = true, m[1], line
			body.Reset()
		case m != nil && m[1] == "":
			open = false
			switch lang {
			case "sh":
				require.Nil(t, next, "line %d: an answer directive before an sh block", start)
				steps = append(steps, guideStep{script: body.String()})
			case "json", "text":
				require.NotEmpty(t, steps, "line %d: a sample answer before any call", start)
				a := sampleAnswer{line: start, lang: lang, body: body.String()}
				if next != nil {
					a.varies, a.webhook = next.varies, next.webhook
					next = nil
				}
				if lang == "json" {
					_, err := decodeJSONValues(a.body)
					require.NoError(t, err, "the json block of line %d is not JSON:\n%s", start, a.body)
				}
				steps[len(steps)-1].answers = append(steps[len(steps)-1].answers, a)
			}
		case open:
			body.WriteString(sc.Text())
			body.WriteByte('\n')
		default:
			if d := answerDirective.FindStringSubmatch(sc.Text()); d != nil {
				next = &sampleAnswer{}
				require.NoError(t, next.parseDirective(d[1]), "line %d", line)
			}
		}
	}
	require.NoError(t, sc.Err())
	require.False(t, open, "the block opened on line %d is not closed", start)
	require.Nil(t, next, "an answer directive without a sample after it")
	return steps
}

// blockMarker precedes the output of each block; stateMarker precedes the
// shell variables printed when the guide has run.
const (
	blockMarker = "::guide-block "
	stateMarker = "::guide-state::"
)

// runGuide runs the blocks in one bash -euo pipefail session with env
// exported, fails the test with the failing block and its output, and
// returns what each block printed on stdout and the values the guide left
// in the shell variables keep.
func runGuide(t *testing.T, name string, steps []guideStep, env map[string]string, keep []string, serverLogs *syncBuffer) ([]string, map[string]string) {
	t.Helper()
	var script strings.Builder
	script.WriteString("trap 'status=$?; [ $status -eq 0 ] || printf \"\\n" + blockMarker + "failed with status $status\\n\"' EXIT\n")
	for i, s := range steps {
		fmt.Fprintf(&script, "printf '\\n%s%d\\n'\n%s", blockMarker, i+1, s.script)
	}
	// Variables of the guide, for the checks after it (NAME=value).
	fmt.Fprintf(&script, "printf '\\n%s\\n'\n", stateMarker)
	for _, v := range keep {
		fmt.Fprintf(&script, "printf '%%s=%%s\\n' %s \"${%s-}\"\n", v, v)
	}

	dir := t.TempDir()
	path := filepath.Join(dir, "guide.sh")
	require.NoError(t, os.WriteFile(path, []byte(script.String()), 0o600))

	ctx, cancel := context.WithTimeout(context.Background(), guideTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", path)
	cmd.Dir = dir
	cmd.Env = guideEnv(env, dir)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	started := time.Now()
	err := cmd.Run()
	t.Logf("%s: %d blocks in %s", name, len(steps), time.Since(started).Round(time.Millisecond))

	out, stateText, _ := strings.Cut(stdout.String(), "\n"+stateMarker+"\n")
	if err != nil || ctx.Err() != nil {
		failed, blockOut := lastBlock(out)
		source := "(none)"
		if failed >= 1 && failed <= len(steps) {
			source = steps[failed-1].script
		}
		t.Fatalf("%s: block %d of %d failed (%v):\n--- block\n%s--- its output\n%s\n--- stderr\n%s\n--- server log (last lines)\n%s",
			name, failed, len(steps), errors.Join(err, ctx.Err()), source, blockOut, tail(stderr.String(), 30), tail(serverLogs.String(), 30))
	}
	outputs := strings.Split(out, "\n"+blockMarker)[1:]
	require.Len(t, outputs, len(steps))
	for i, o := range outputs {
		_, outputs[i], _ = strings.Cut(o, "\n") // the block's number
	}
	return outputs, parseState(stateText)
}

// requireAnswers fails the test with every difference between what the
// blocks of a guide printed (outputs) and the answers it shows after them.
func requireAnswers(t *testing.T, name string, steps []guideStep, outputs []string) {
	t.Helper()
	for i, s := range steps {
		problems := compareAnswers(outputs[i], s.answers)
		for _, p := range problems {
			t.Errorf("%s, the answer of block %d: %s", name, i+1, p)
		}
		if len(problems) > 0 {
			t.Logf("%s, block %d printed:\n%s", name, i+1, outputs[i])
		}
	}
}

// guideEnv is the environment of the guide's shell: the test's, without
// the variables the guides read and those that would load the user's
// settings (~/.curlrc, BASH_ENV), then env.
func guideEnv(env map[string]string, home string) []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "BASE", "TENANT", "CLIENT_ID", "CLIENT_SECRET", "POS_ID", "POS_SECRET", "WEBHOOK_URL", "TOKEN", "ANALYST_TOKEN",
			"HOME", "TMPDIR", "CURL_HOME", "BASH_ENV", "ENV", "XDG_CONFIG_HOME":
			continue
		}
		out = append(out, kv)
	}
	out = append(out, "HOME="+home, "TMPDIR="+home)
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

// lastBlock returns the number of the last block that started and what it
// wrote.
func lastBlock(out string) (int, string) {
	i := strings.LastIndex(out, blockMarker)
	for i >= 0 {
		rest := out[i+len(blockMarker):]
		var n int
		if _, err := fmt.Sscanf(rest, "%d", &n); err == nil {
			_, after, _ := strings.Cut(rest, "\n")
			return n, after
		}
		i = strings.LastIndex(out[:i], blockMarker)
	}
	return 0, out
}

// parseState reads the NAME=value lines written after the guide.
func parseState(s string) map[string]string {
	vars := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		name, value, ok := strings.Cut(line, "=")
		if ok {
			vars[name] = value
		}
	}
	return vars
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// hookReceiver is a webhook endpoint on 127.0.0.1 that answers 204 and keeps
// what it received.
type hookReceiver struct {
	url string
	mu  sync.Mutex
	got []receivedHook
}

type receivedHook struct {
	header http.Header
	body   []byte
}

func newHookReceiver(t *testing.T) *hookReceiver {
	t.Helper()
	h := &hookReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.got = append(h.got, receivedHook{header: r.Header.Clone(), body: body})
		h.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	h.url = srv.URL
	return h
}

// compare compares a webhook sample with the first event of its type that
// arrived.
func (h *hookReceiver) compare(sample sampleAnswer) []string {
	want, err := decodeJSONValues(sample.body)
	if err != nil || len(want) != 1 {
		return []string{fmt.Sprintf("line %d: a webhook sample is one JSON object", sample.line)}
	}
	w, _ := want[0].(map[string]any)
	eventType, _ := w["type"].(string)
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, got := range h.got {
		var event struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(got.body, &event) == nil && event.Type == eventType {
			return compareAnswers(string(got.body), []sampleAnswer{{line: sample.line, lang: "json", body: sample.body, varies: sample.varies}})
		}
	}
	return []string{fmt.Sprintf("line %d: no %q webhook arrived", sample.line, eventType)}
}

// requireSigned checks that an event of type eventType arrived, signed with
// secret.
func (h *hookReceiver) requireSigned(t *testing.T, secret, eventType string) {
	t.Helper()
	require.NotEmpty(t, secret, "the guide must keep the endpoint's secret")
	h.mu.Lock()
	defer h.mu.Unlock()
	var types []string
	for _, got := range h.got {
		var env struct {
			Type string `json:"type"`
		}
		require.NoError(t, json.Unmarshal(got.body, &env), string(got.body))
		types = append(types, env.Type)
		if env.Type == eventType {
			require.NoError(t, webhook.Verify(secret, got.header, got.body, time.Now(), 5*time.Minute))
			return
		}
	}
	t.Fatalf("no %s webhook arrived; got %v", eventType, types)
}
