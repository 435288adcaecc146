package checkout

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/domain/eligibility"
	"github.com/fideliza/fideliza/ent/schema/pid"
)

// testKey signs the tokens of these tests.
var testKey = bytes.Repeat([]byte{7}, 32)

// benchToken is a validation of fideliza-bench's cart (30 items) with 50
// campaigns eligible, two of them excluded by the stacking rules.
func benchToken() *validationToken {
	t := &validationToken{
		ID: pid.New(pid.Validation), CustomerID: pid.New(pid.Customer), Channel: "ecommerce", StoreID: "LOJA-01",
		ExpiresAt: time.Now().Add(ValidationTTL), PointsPerReal: decimal.NewFromInt(1),
		Excluded: map[string]string{pid.New(pid.Campaign): pid.New(pid.Campaign), pid.New(pid.Campaign): pid.New(pid.Campaign)},
	}
	for i := range 30 {
		t.Cart.Items = append(t.Cart.Items, eligibility.Item{
			SKU: fmt.Sprintf("SKU-%d", i), Category: fmt.Sprintf("cat-%d", i%6),
			Quantity: decimal.NewFromInt(int64(1 + i%3)), UnitPrice: decimal.RequireFromString(fmt.Sprintf("%d.%02d", 5+i, i)),
		})
	}
	for range 50 {
		t.Campaigns = append(t.Campaigns, pid.New(pid.Campaign))
	}
	return t
}

// TestTokenRoundTrip: a token carries what validate promised, exactly, in a
// few kilobytes for the bench's validation; ids of other shapes and
// negative or large decimals survive too.
func TestTokenRoundTrip(t *testing.T) {
	t.Parallel()
	bench := benchToken()
	odd := &validationToken{
		ID: "val_not-a-ulid", CustomerID: "cus_01JD3K4V5W6X7Y8Z9A0B1C2D3E", CouponID: pid.New(pid.Coupon),
		ExpiresAt: time.Unix(1, 2).UTC(), PointsPerReal: decimal.RequireFromString("-0.000001"),
		Cart: eligibility.Cart{Subtotal: decimal.RequireFromString("123456789012345678901234567890.12"), Items: []eligibility.Item{
			{GTIN: "7891000100103", Brand: "Marca", Quantity: decimal.RequireFromString("1.5"), UnitPrice: decimal.Zero},
		}},
		Campaigns: []string{"cmp_x", ""},
	}
	for name, tok := range map[string]*validationToken{"bench": bench, "odd ids and decimals": odd, "empty": {ExpiresAt: time.Unix(0, 0).UTC()}} {
		t.Run(name, func(t *testing.T) {
			s := tok.sealWith(testKey)
			got, err := parseToken(testKey, s)
			require.NoError(t, err)
			require.Equal(t, tok.encode(), got.encode())
			require.Equal(t, tok.ID, got.ID)
			require.Equal(t, tok.CustomerID, got.CustomerID)
			require.Equal(t, tok.CouponID, got.CouponID)
			require.True(t, tok.ExpiresAt.Equal(got.ExpiresAt))
			require.Equal(t, tok.Campaigns, got.Campaigns)
			require.Equal(t, tok.Excluded, got.Excluded)
			require.Len(t, got.Cart.Items, len(tok.Cart.Items))
			for i, it := range tok.Cart.Items {
				require.True(t, it.UnitPrice.Equal(got.Cart.Items[i].UnitPrice))
				require.True(t, it.Quantity.Equal(got.Cart.Items[i].Quantity))
				require.Equal(t, it.SKU+it.GTIN+it.Category+it.Brand,
					got.Cart.Items[i].SKU+got.Cart.Items[i].GTIN+got.Cart.Items[i].Category+got.Cart.Items[i].Brand)
			}
			require.True(t, tok.Cart.Subtotal.Equal(got.Cart.Subtotal))
			require.True(t, tok.PointsPerReal.Equal(got.PointsPerReal))
			_, err = parseToken(bytes.Repeat([]byte{8}, 32), s)
			require.ErrorIs(t, err, errNotToken, "another key's token")
		})
	}
	s := bench.sealWith(testKey)
	t.Logf("30 items × 50 campaigns: %d characters", len(s))
	require.Less(t, len(s), 2500)
}

// FuzzParseToken: whatever a client sends as a token, parsing answers
// errNotToken or a token (never a panic), and only tokens signed with the
// key parse; a parsed token seals again to itself.
func FuzzParseToken(f *testing.F) {
	f.Add(benchToken().sealWith(testKey))
	f.Add("vtk_")
	f.Fuzz(func(t *testing.T, s string) {
		tok, err := parseToken(testKey, s)
		if err != nil {
			require.ErrorIs(t, err, errNotToken)
			return
		}
		again, err := parseToken(testKey, tok.sealWith(testKey))
		require.NoError(t, err)
		require.Equal(t, tok.encode(), again.encode())
	})
}

// FuzzDecodeToken: the payload reader, behind the signature, takes any
// bytes without a panic or an allocation beyond them, and what it reads
// encodes to a payload it reads the same.
func FuzzDecodeToken(f *testing.F) {
	f.Add(benchToken().encode())
	f.Add([]byte{tokenVersion})
	f.Fuzz(func(t *testing.T, payload []byte) {
		tok, err := decodeToken(payload)
		if err != nil {
			return
		}
		again, err := decodeToken(tok.encode())
		require.NoError(t, err)
		require.Equal(t, tok.encode(), again.encode())
	})
}
