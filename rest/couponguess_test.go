package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/app/campaigns"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// TestCouponGuessBurst: a burst of 400 unknown codes sent at once by one
// client (over 50 customers, under each one's quota) gets exactly the
// client's quota of answers; the rest are 429. Counting a guess after its
// lookup let a burst through between the check and the count.
func TestCouponGuessBurst(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		e := posSetup(t, db)
		token := e.tokenFor(t, campScopeRead)
		e.posCampaign(t, campaigns.CampaignInput{Name: "Cupom", Channels: []string{"ecommerce"}, RequiresCode: true,
			Discount: &campaigns.DiscountInput{Mode: "percentage", Value: posDecPtr("15")}})
		const customers, each = 50, 8
		require.Less(t, each, campaigns.CouponGuessesPerCustomer.Limit, "no customer reaches its own quota")
		ids := make([]string, customers)
		for i := range ids {
			ids[i] = e.posCustomer(t, posCPF(), posCust{name: fmt.Sprintf("Cliente %d", i)}).ID
		}
		bodies := make([][]byte, customers*each)
		for i := range bodies {
			var err error
			bodies[i], err = json.Marshal(map[string]any{"customer_id": ids[i%customers], "channel": "ecommerce",
				"coupon_code": fmt.Sprintf("CHUTE-%04d", i),
				"cart":        map[string]any{"items": []any{map[string]any{"sku": "A", "quantity": 1, "unit_price": 100}}}})
			require.NoError(t, err)
		}
		answers := burst(e.srv, token, "/v1/campaigns/validate", bodies)
		limit := campaigns.CouponGuessesPerClient.Limit
		require.Equal(t, map[string]int{
			"422 coupon_code_invalid":      limit,
			"429 coupon_attempts_exceeded": customers*each - limit,
		}, answers)
	})
}

// burst posts every body to path at once with token and counts the
// answers by status and error code ("429 coupon_attempts_exceeded"); a 429
// without Retry-After is told apart. A 503 (the database out of
// connections under the burst, on a CI machine running every package at
// once) counts no guess: the request is sent again, backing off as a
// client told to retry would.
func burst(srv *httptest.Server, token, path string, bodies [][]byte) map[string]int {
	var wg sync.WaitGroup
	var mu sync.Mutex
	answers := map[string]int{}
	start := make(chan struct{})
	for _, body := range bodies {
		wg.Go(func() {
			<-start
			answer := "failed"
			for retry := 0; retry < 20; retry++ {
				req, _ := http.NewRequest(http.MethodPost, srv.URL+path, bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+token)
				res, err := srv.Client().Do(req)
				if err != nil {
					break
				}
				var out struct{ Error string }
				_ = json.NewDecoder(res.Body).Decode(&out)
				_ = res.Body.Close()
				answer = fmt.Sprintf("%d %s", res.StatusCode, out.Error)
				if res.StatusCode == http.StatusTooManyRequests && res.Header.Get("Retry-After") == "" {
					answer += " without Retry-After"
				}
				if res.StatusCode != http.StatusServiceUnavailable {
					break
				}
				time.Sleep(time.Duration(retry+1) * 50 * time.Millisecond)
			}
			mu.Lock()
			answers[answer]++
			mu.Unlock()
		})
	}
	close(start)
	wg.Wait()
	return answers
}
