package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/panel"
	"github.com/fideliza/fideliza/playground"
	"github.com/fideliza/fideliza/viewer"
)

// bannerAnalystCalls is how many of the playground's examples the banner
// prints as calls of the analyst: the dashboards.
const bannerAnalystCalls = 3

// printDemo prints the demo's credentials and calls to paste: an
// integration's (the OAuth client's), the panel's sign-in link, and an
// analyst's token with the dashboards' queries.
func printDemo(ctx context.Context, g *globals, a *app.App, c *app.DemoCredentials) error {
	base := a.Auth.Issuer
	signIn := base + panel.Base + "/sign-in?code=" + a.Auth.NewSignInCode(c.TenantID, viewer.RoleAdmin, "demo")
	// The analyst's token, as `fideliza user token --role analyst` signs
	// it: the dashboards need a back-office user, which OAuth clients are
	// not.
	analyst, err := a.Auth.IssueUserToken(ctx, c.TenantID, viewer.RoleAnalyst, "demo-analyst", auth.DefaultUserTokenLifetime)
	if err != nil {
		return fmt.Errorf("the demo analyst's token: %w", err)
	}
	playgroundLink := base + "/playground#access_token=" + analyst
	if g.jsonOutput {
		return g.print(map[string]any{
			"tenant_id":          c.TenantID,
			"oauth_client":       map[string]string{"client_id": c.OAuthClientID, "client_secret": c.OAuthSecret},
			"pos_client":         map[string]string{"client_id": c.POSClientID, "client_secret": c.POSSecret},
			"store_codes":        c.StoreCodes,
			"base_url":           base,
			"panel_sign_in":      signIn,
			"analyst_token":      analyst,
			"playground_sign_in": playgroundLink,
		}, "")
	}
	// The calls fail at once on an HTTP error (--fail-with-body), with the
	// answer, rather than at the next call with a missing token.
	fmt.Fprintf(g.stdout, `
Fideliza demo tenant %[2]s is ready at %[1]s
  OAuth client (integrations): %[3]s  secret %[4]s
  POS client (HTTP Basic):     %[5]s  secret %[6]s
  Stores: %[7]v
  (secrets are new on every start with --demo)

1. Get an access token:
TOKEN=$(curl -sS --fail-with-body -X POST %[1]s/auth/token -u '%[3]s:%[4]s' -d grant_type=client_credentials | sed -nE 's/.*"access_token":"([^"]+)".*/\1/p')

2. List customers through GraphQL:
curl -sS --fail-with-body %[1]s/graphql -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d '{"query":"{ customers(first: 5) { totalCount edges { node { id name email level pointsBalance } } } }"}'

3. List active campaigns:
curl -sS --fail-with-body %[1]s/graphql -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d '{"query":"{ campaigns(where: {status: active}) { edges { node { id name type status endsAt } } } }"}'

4. Sign in to the developer panel as an admin of the demo tenant (the link works once, within %[9]s):
%[8]s
   then open its charts: %[1]s/panel/insights (pick "Last 12 months" for the whole year).
   Later, a token to paste on its sign-in page: fideliza user token --tenant %[2]s --public-url %[1]s

5. Explore the data as an analyst (read only; the dashboards need a back-office user, not an OAuth client).
   A token valid for %[10]s on this address:
export ANALYST_TOKEN=%[11]s
   The GraphQL playground signed in with it, its tabs holding the queries below and more:
   %[12]s
   Later, a new token: fideliza user token --tenant %[2]s --role analyst --public-url %[1]s
`, base, c.TenantID, c.OAuthClientID, c.OAuthSecret, c.POSClientID, c.POSSecret, c.StoreCodes, signIn, auth.SignInLinkLifetime,
		auth.DefaultUserTokenLifetime, analyst, playgroundLink)
	now := a.Now()
	for i, e := range playground.Examples[:bannerAnalystCalls] {
		fmt.Fprintf(g.stdout, "\n%d. %s:\ncurl -sS --fail-with-body %s/graphql -H \"Authorization: Bearer $ANALYST_TOKEN\" -H 'Content-Type: application/json' -d '%s'\n",
			6+i, strings.TrimSuffix(e.Title, "."), base, e.Request(now))
	}
	fmt.Fprintln(g.stdout)
	return nil
}
