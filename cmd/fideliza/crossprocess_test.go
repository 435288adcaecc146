package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/internal/crashtest"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// crossProcessFeed is how soon a change committed by another process
// reaches a running serve's read model (a tenant's settings, its stores);
// keysPublished is how soon a running serve publishes a key another
// process made (its key cache's lifetime).
const (
	crossProcessFeed = time.Second
	keysPublished    = time.Minute
)

// TestCLIReachesRunningServe: on both databases, what the command line
// changes while serve runs (each its own process, as an operator runs
// them) takes effect on serve within its documented time: a tenant's
// settings and a new store within a second, a revoked client within
// auth.DefaultClientCheckTTL, a rotated key in the JWKS within a minute.
func TestCLIReachesRunningServe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs it; skipped with -short")
	}
	t.Parallel()
	bin := crashtest.Build(t)
	for _, d := range storagetest.Dialects() {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			u := storagetest.URL(t, d, false)
			cli := func(t *testing.T, args ...string) map[string]any {
				t.Helper()
				var out, errs bytes.Buffer
				cmd := exec.Command(bin, append([]string{"--database-url", u, "--json"}, args...)...)
				cmd.Stdout, cmd.Stderr = &out, &errs
				require.NoError(t, cmd.Run(), "fideliza %v: %s", args, errs.String())
				var v map[string]any
				require.NoError(t, json.Unmarshal(out.Bytes(), &v), "output of %v: %s", args, out.String())
				return v
			}
			tenant := cli(t, "tenant", "create", "--name", "Mercado")["id"].(string)
			client := func(t *testing.T) (id, secret string) {
				c := cli(t, "client", "create", "--tenant", tenant, "--kind", "oauth",
					"--scopes", "customers:read customers:write loyalty:write campaigns:read campaigns:write")
				return c["client_id"].(string), c["client_secret"].(string)
			}
			addr := crashtest.FreeAddr(t)
			base := "http://" + addr
			serve := crashtest.Start(t, bin, filepath.Join(t.TempDir(), "serve.log"), `"msg":"listening"`,
				"--database-url", u, "serve", "--no-worker", "--addr", addr, "--rate-limit", "off")
			serve.WaitStarted(t, 2*time.Minute)

			call := func(t *testing.T, method, path, token string, body any) (int, map[string]any) {
				t.Helper()
				var r io.Reader
				if body != nil {
					b, err := json.Marshal(body)
					require.NoError(t, err)
					r = bytes.NewReader(b)
				}
				req, err := http.NewRequest(method, base+path, r)
				require.NoError(t, err)
				req.Header.Set("Content-Type", "application/json")
				if token != "" {
					req.Header.Set("Authorization", "Bearer "+token)
				}
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				defer resp.Body.Close()
				var v map[string]any
				data, _ := io.ReadAll(resp.Body)
				_ = json.Unmarshal(data, &v)
				return resp.StatusCode, v
			}
			tokenOf := func(t *testing.T, id, secret string) string {
				t.Helper()
				req, _ := http.NewRequest(http.MethodPost, base+"/auth/token",
					strings.NewReader(url.Values{"grant_type": {"client_credentials"}}.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				req.SetBasicAuth(id, secret)
				var tok struct {
					AccessToken string `json:"access_token"`
				}
				doJSON(t, req, http.StatusOK, &tok)
				return tok.AccessToken
			}
			// takesEffect runs the command, then asks seen (given the
			// command's output) every 50 ms until it says yes: the first ask
			// that does must have begun within limit of the command's end
			// (a slow answer is not held against it).
			takesEffect := func(t *testing.T, limit time.Duration, seen func(out map[string]any) bool, args ...string) {
				t.Helper()
				out := cli(t, args...)
				done := time.Now()
				tick := time.NewTicker(50 * time.Millisecond)
				defer tick.Stop()
				for {
					asked := time.Now()
					if seen(out) {
						t.Logf("%v took effect after %v", args[:2], asked.Sub(done).Round(time.Millisecond))
						return
					}
					require.Less(t, time.Since(done), limit, "%v has not taken effect on serve; log:\n%s", args, serve.Tail())
					<-tick.C
				}
			}
			first, secret := client(t)
			token := tokenOf(t, first, secret)
			status, customer := call(t, http.MethodPost, "/v1/customers", token, map[string]any{"name": "Ana", "email": "ana@example.com", "cpf": "529.982.247-25"})
			require.Equal(t, http.StatusCreated, status, "%v", customer)
			customerID := customer["id"].(string)

			t.Run("settings", func(t *testing.T) {
				holdRefused := func(t *testing.T) bool {
					status, v := call(t, http.MethodPost, "/v1/points/holds", token, map[string]any{"customer_id": customerID,
						"order_id": "PED-1", "amount": json.Number("1.00"), "order_amount": json.Number("100.00")})
					return status == http.StatusUnprocessableEntity && v["error"] == "points_payment_off"
				}
				require.True(t, holdRefused(t), "points are not taken online yet")
				takesEffect(t, crossProcessFeed, func(map[string]any) bool { return !holdRefused(t) },
					"tenant", "update", "--tenant", tenant, "--points-spend-channels", "pdv,ecommerce")
			})
			t.Run("store", func(t *testing.T) {
				now := time.Now().UTC()
				status, campaign := call(t, http.MethodPost, "/v1/campaigns", token, map[string]any{
					"name": "Região Sul", "description": "Só nas lojas do sul", "type": "discount",
					"starts_at": now.Add(-time.Hour).Format(time.RFC3339), "ends_at": now.Add(30 * 24 * time.Hour).Format(time.RFC3339),
					"discount": map[string]any{"mode": "percentage", "value": 10}, "store_groups": []string{"sul"}})
				require.Equal(t, http.StatusCreated, status, "%v", campaign)
				eligibleAtNewStore := func(map[string]any) bool {
					status, v := call(t, http.MethodPost, "/v1/campaigns/validate", token, map[string]any{
						"customer_id": customerID, "channel": "pdv", "store_id": "LJ-NOVA",
						"cart": map[string]any{"subtotal": json.Number("25.00"), "items": []any{map[string]any{
							"sku": "SKU-CAFE", "category": "mercearia", "quantity": 2, "unit_price": json.Number("12.50")}}}})
					require.Equal(t, http.StatusOK, status, "%v", v)
					return slices.ContainsFunc(v["eligible_campaigns"].([]any), func(c any) bool {
						return c.(map[string]any)["campaign_id"] == campaign["id"]
					})
				}
				require.False(t, eligibleAtNewStore(nil), "the store does not exist yet")
				takesEffect(t, crossProcessFeed, eligibleAtNewStore,
					"store", "create", "--tenant", tenant, "--code", "LJ-NOVA", "--name", "Loja Nova", "--group", "sul")
			})
			t.Run("revoked client", func(t *testing.T) {
				t.Parallel()
				id, secret := client(t)
				revoked := tokenOf(t, id, secret)
				works := func(t *testing.T) bool {
					status, _ := call(t, http.MethodGet, "/v1/customers", revoked, nil)
					return status == http.StatusOK
				}
				require.True(t, works(t))
				takesEffect(t, auth.DefaultClientCheckTTL+crossProcessFeed, func(map[string]any) bool { return !works(t) },
					"client", "revoke", "--client-id", id)
			})
			t.Run("key rotation", func(t *testing.T) {
				t.Parallel()
				published := func(t *testing.T, kid string) bool {
					var set struct {
						Keys []struct {
							Kid string `json:"kid"`
						} `json:"keys"`
					}
					req, _ := http.NewRequest(http.MethodGet, base+"/.well-known/jwks.json", nil)
					doJSON(t, req, http.StatusOK, &set)
					return slices.ContainsFunc(set.Keys, func(k struct {
						Kid string `json:"kid"`
					}) bool {
						return k.Kid == kid
					})
				}
				takesEffect(t, keysPublished+crossProcessFeed, func(out map[string]any) bool { return published(t, out["kid"].(string)) },
					"keys", "rotate")
			})
		})
	}
}
