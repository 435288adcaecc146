package scalar

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"
)

// TestMoney: amounts render with exactly two decimal places, rounded half
// away from zero, and are read with at most two.
func TestMoney(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"911.008": `"911.01"`, "882.8": `"882.80"`, "0": `"0.00"`, "-324551.5": `"-324551.50"`,
		"2.345": `"2.35"`, "2.3449": `"2.34"`, "-0.005": `"-0.01"`, "-0.004": `"0.00"`, "12345678901234.999": `"12345678901235.00"`,
	} {
		var b bytes.Buffer
		MarshalMoney(decimal.RequireFromString(in)).MarshalGQL(&b)
		require.Equal(t, want, b.String(), in)
	}
	for _, c := range []struct {
		in   any
		want string // "" when refused
	}{
		{"12.5", "12.5"}, {"12.50", "12.5"}, {"-3", "-3"}, {json.Number("0.01"), "0.01"}, {int64(7), "7"}, {12.5, "12.5"},
		{"12.505", ""}, {"0.001", ""}, {json.Number("1.999"), ""}, {"ten", ""}, {"1e308", ""}, {true, ""},
	} {
		got, err := UnmarshalMoney(c.in)
		if c.want == "" {
			require.Error(t, err, "%v", c.in)
			continue
		}
		require.NoError(t, err, "%v", c.in)
		require.Equal(t, c.want, got.String(), "%v", c.in)
	}
}
