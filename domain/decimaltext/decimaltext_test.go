package decimaltext

import (
	"testing"

	"github.com/shopspring/decimal"
)

func TestFormat(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"0", "0"}, {"0.00", "0"}, {"12.50", "12.5"}, {"-0.05", "-0.05"}, {"-100.00", "-100"},
		{"0.00000001", "0.00000001"}, {"123456789012345678", "123456789012345678"},
		{"1234567890123456789.5", "1234567890123456789.5"}, {"5e3", "5000"}, {"-7", "-7"},
		{"0.1234567890123456789", "0.1234567890123456789"},
	} {
		if got := Format(decimal.RequireFromString(tc.in)); got != tc.want {
			t.Errorf("Format(%s) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzFormat: Format and Rounded write what decimal's String writes, for
// any coefficient and exponent.
func FuzzFormat(f *testing.F) {
	for _, seed := range []struct {
		coefficient int64
		exp         int32
	}{{0, 0}, {1250, -2}, {-5, -1}, {-10000, -2}, {1, -8}, {999999999999999999, -18}, {-9223372036854775808, -3}, {7, 4}, {123, -30}} {
		f.Add(seed.coefficient, seed.exp)
	}
	f.Fuzz(func(t *testing.T, coefficient int64, exp int32) {
		exp %= 40
		d := decimal.New(coefficient, exp)
		if got, want := Format(d), d.String(); got != want {
			t.Fatalf("Format(%de%d) = %q, want %q", coefficient, exp, got, want)
		}
		if got, want := Rounded(d, 8), d.Round(8).String(); got != want {
			t.Fatalf("Rounded(%de%d, 8) = %q, want %q", coefficient, exp, got, want)
		}
	})
}

func BenchmarkFormat(b *testing.B) {
	d := decimal.New(123456789, -8)
	b.Run("String", func(b *testing.B) {
		for b.Loop() {
			_ = d.String()
		}
	})
	b.Run("Format", func(b *testing.B) {
		for b.Loop() {
			_ = Format(d)
		}
	})
}
