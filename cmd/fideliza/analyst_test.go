package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/demoyear/demotest"
	"github.com/fideliza/fideliza/playground"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// readmeAnalystsHeading opens the README's section for analysts, whose sh
// blocks TestReadmeAnalysts runs.
const readmeAnalystsHeading = "## Analysts: the dashboards through GraphQL"

// TestReadmeAnalysts runs the sh blocks of the README's section for
// analysts in one bash session, as TestGuides runs a guide's, against
// serve --demo with the analyst's token its banner prints: a failed call,
// or an answer that differs from the one the README shows after it, fails
// the test.
func TestReadmeAnalysts(t *testing.T) {
	t.Parallel()
	requireTools(t, "bash", "curl", "jq")
	steps := parseGuide(t, readmeSection(t, readmeAnalystsHeading))
	require.GreaterOrEqual(t, len(steps), 4, "the token, then three queries")
	for _, d := range storagetest.Dialects() {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			logs := &syncBuffer{}
			base, stdout := startServe(t, logs, demotest.URL(t, d, demotest.Today()), "--demo")
			env := map[string]string{"BASE": base, "ANALYST_TOKEN": between(t, stdout.String(), "export ANALYST_TOKEN=", "\n")}
			outputs, _ := runGuide(t, "README.md, "+readmeAnalystsHeading, steps, env, nil, logs)
			requireAnswers(t, "README.md, "+readmeAnalystsHeading, steps, outputs)
		})
	}
}

// readmeSection is the README's section under heading, up to the next
// heading of its level or above, after as many empty lines as the README
// has lines before it: the line numbers of parseGuide's messages are the
// README's.
func readmeSection(t *testing.T, heading string) string {
	t.Helper()
	before, section, ok := strings.Cut(readREADME(t), "\n"+heading+"\n")
	require.True(t, ok, "the README has no section %q", heading)
	section = strings.Repeat("\n", strings.Count(before, "\n")+2) + section
	level := headingLevel(heading)
	var kept []string
	open := false // in a fenced block, where # starts a comment
	for _, l := range strings.Split(section, "\n") {
		if strings.HasPrefix(l, "```") {
			open = !open
		}
		if n := headingLevel(l); !open && n > 0 && n <= level {
			break
		}
		kept = append(kept, l)
	}
	return strings.Join(kept, "\n")
}

// headingLevel is the level of a Markdown heading line (2 for "## …"), 0
// for another line.
func headingLevel(l string) int {
	n := len(l) - len(strings.TrimLeft(l, "#"))
	if n == 0 || !strings.HasPrefix(l[n:], " ") {
		return 0
	}
	return n
}

// requireBannerAnalystCalls runs the analyst's token and calls the demo's
// banner prints (its steps 5 to 8), pasted as printed, and checks their
// answers: the dashboards of the demo's year. Then it runs every example
// of the playground with that token, which the banner's playground link
// signs in with.
func requireBannerAnalystCalls(t *testing.T, base, banner string, logs *syncBuffer) {
	t.Helper()
	requireTools(t, "bash", "curl")
	calls := bannerCalls(t, banner, 5, 8)
	require.True(t, strings.HasPrefix(calls[0], "export ANALYST_TOKEN="), calls[0])
	var steps []guideStep
	for _, c := range calls {
		steps = append(steps, guideStep{script: c + "\n"})
	}
	out, state := runGuide(t, "the demo's banner, the analyst's calls", steps, map[string]string{}, []string{"ANALYST_TOKEN"}, logs)
	token := state["ANALYST_TOKEN"]
	require.NotEmpty(t, token)
	require.Contains(t, banner, "\n   "+base+"/playground#access_token="+token+"\n", "the playground link signs in with the token")

	var sales struct {
		SalesByStoreDay []struct {
			Day   string
			Store struct{ Code string }
			Sales int
		}
	}
	decodeAnswer(t, out[1], &sales)
	days, stores := map[string]bool{}, map[string]bool{}
	for _, r := range sales.SalesByStoreDay {
		require.Positive(t, r.Sales, "a row of a store and day with sales")
		days[r.Day], stores[r.Store.Code] = true, true
	}
	// The year ends at the start of the tenant's day of its end, which
	// holds no sale: six whole days and the end of a seventh.
	require.GreaterOrEqual(t, len(days), 6, "sales on each day of the last 7: %s", out[1])
	require.Len(t, stores, 12, "sales at every store in 7 days")

	var top struct {
		TopCustomers []struct {
			Customer struct{ Name string }
			Spend    decimal.Decimal
			Sales    int
		}
	}
	decodeAnswer(t, out[2], &top)
	require.Len(t, top.TopCustomers, 5)
	for _, c := range top.TopCustomers {
		require.NotEmpty(t, c.Customer.Name)
		require.Positive(t, c.Sales, "%s bought in the last 30 days", c.Customer.Name)
		require.True(t, c.Spend.IsPositive(), "%s spent in the last 30 days", c.Customer.Name)
	}

	var lift struct {
		Campaigns struct {
			Edges []struct {
				Node struct {
					Name string
					Lift *struct{ TreatedCustomers, HeldOutCustomers int }
				}
			}
		}
	}
	decodeAnswer(t, out[3], &lift)
	require.NotEmpty(t, lift.Campaigns.Edges, "the demo's year holds an experiment")
	for _, e := range lift.Campaigns.Edges {
		require.NotNil(t, e.Node.Lift, e.Node.Name)
		require.Positive(t, e.Node.Lift.TreatedCustomers, e.Node.Name)
		require.Positive(t, e.Node.Lift.HeldOutCustomers, e.Node.Name)
	}

	// Every tab of the playground answers the analyst with data.
	for _, e := range playground.Examples {
		req, _ := http.NewRequest(http.MethodPost, base+"/graphql", bytes.NewReader(e.Request(time.Now())))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		var got struct {
			Data   map[string]json.RawMessage
			Errors []any
		}
		doJSON(t, req, http.StatusOK, &got)
		require.Empty(t, got.Errors, e.Title)
		require.Len(t, got.Data, 1, e.Title)
		for field, v := range got.Data {
			require.NotContains(t, []string{"null", "[]", `{"edges":[]}`}, string(v), "%s: %s is empty", e.Title, field)
		}
	}
}

// decodeAnswer decodes a GraphQL answer's data into v, failing on any
// error.
func decodeAnswer(t *testing.T, answer string, v any) {
	t.Helper()
	var got struct {
		Data   json.RawMessage
		Errors []any
	}
	require.NoError(t, json.Unmarshal([]byte(answer), &got), answer)
	require.Empty(t, got.Errors, answer)
	require.NoError(t, json.Unmarshal(got.Data, v), answer)
}
