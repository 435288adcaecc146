package guard_test

import (
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/guard"
	"github.com/fideliza/fideliza/domain/opt"
)

func TestNumber(t *testing.T) {
	cases := []struct {
		literal string
		ok      bool
	}{
		{"12.50", true}, {"-999999999999.99999999", true}, {"0.000000001", true}, {"1e3", true},
		{"1000000000000", false}, {"-1e12", false}, {"1e308", false}, {"1e-308", false},
		{"abc", false}, {"", false}, {strings.Repeat("9", 65), false}, {strings.Repeat("1", 900_000), false},
	}
	for _, c := range cases {
		var p apperr.Problems
		d := guard.Number(&p, "amount", c.literal)
		require.Equal(t, c.ok, d != nil, "%.40s", c.literal)
		require.Equal(t, c.ok, len(p) == 0, "%.40s: %v", c.literal, p)
		if !c.ok {
			require.Equal(t, "amount", p[0].Field)
		}
	}
}

// TestInputWalksEveryField: text and numbers anywhere in an input are
// checked, named as the interfaces name them.
func TestInputWalksEveryField(t *testing.T) {
	type item struct {
		SKU       string
		UnitPrice decimal.Decimal
	}
	type input struct {
		CustomerID string
		Name       opt.Field[string]
		Cleared    opt.Field[string]
		Note       *string
		Items      []item
		Tags       map[string]string
		When       time.Time
		Raw        []byte
	}
	bad := "a\x00b"
	in := input{
		CustomerID: "cus_\xff", Name: opt.Of(bad), Cleared: opt.Null[string](), Note: &bad,
		Items: []item{{SKU: "ok", UnitPrice: decimal.NewFromInt(1)}, {SKU: strings.Repeat("x", guard.MaxText+1), UnitPrice: decimal.New(1, 300)}},
		Tags:  map[string]string{"k": bad}, Raw: []byte{0},
	}
	var p apperr.Problems
	guard.Input(&p, in)
	fields := map[string]bool{}
	for _, fe := range p {
		fields[fe.Field] = true
	}
	require.Equal(t, map[string]bool{
		"customer_id": true, "name": true, "note": true, "items[1].sku": true, "items[1].unit_price": true, "tags.k": true,
	}, fields)

	p = nil
	guard.Input(&p, input{CustomerID: "cus_1", Name: opt.Of("Ana Lúcia"), Items: []item{{SKU: "7891000", UnitPrice: decimal.RequireFromString("9.99")}}})
	require.Empty(t, p)
}
