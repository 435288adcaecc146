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

func TestTime(t *testing.T) {
	offset := func(h int) *time.Location { return time.FixedZone("", h*3600) }
	cases := []struct {
		at time.Time
		ok bool
	}{
		{time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), true}, {time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), true},
		{time.Date(2026, 3, 1, 0, 0, 0, 0, offset(-3)), true},
		{time.Date(9999, 12, 31, 23, 59, 59, 0, offset(-23)), false}, // the year 10000 in UTC
		{time.Date(1, 1, 1, 0, 0, 0, 0, offset(1)), false},           // the year 0 in UTC
		{time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC), false},
	}
	for _, c := range cases {
		var p apperr.Problems
		require.Equal(t, c.ok, guard.Time(&p, "ends_at", c.at), "%s", c.at)
		require.Equal(t, c.ok, len(p) == 0, "%s", c.at)
	}
}

// TestInputWalksEveryField: text, numbers and instants anywhere in an input are
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
		Tags:  map[string]string{"k": bad}, Raw: []byte{0}, When: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	var p apperr.Problems
	guard.Input(&p, in)
	fields := map[string]bool{}
	for _, fe := range p {
		fields[fe.Field] = true
	}
	require.Equal(t, map[string]bool{
		"customer_id": true, "name": true, "note": true, "items[1].sku": true, "items[1].unit_price": true, "tags.k": true,
		"when": true,
	}, fields)

	p = nil
	guard.Input(&p, input{CustomerID: "cus_1", Name: opt.Of("Ana Lúcia"), Items: []item{{SKU: "7891000", UnitPrice: decimal.RequireFromString("9.99")}}})
	require.Empty(t, p)
}
