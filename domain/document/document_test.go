package document

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseCPF(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want string
		err  error
	}{
		{"52998224725", "52998224725", nil},
		{"529.982.247-25", "52998224725", nil},
		{" 111.444.777-35 ", "11144477735", nil},
		{"529.982.247-24", "", ErrCheckDigits},
		{"52998224752", "", ErrCheckDigits},
		{"11111111111", "", ErrCheckDigits},
		{"00000000000", "", ErrCheckDigits},
		{"5299822472", "", ErrLength},
		{"529982247255", "", ErrLength},
		{"", "", ErrLength},
		{"5299822472A", "", ErrCharacters},
		{"52998224７25", "", ErrLength}, // a full-width digit is not a digit
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseCPF(tc.in)
			require.ErrorIs(t, err, tc.err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestParseCNPJ(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want string
		err  error
	}{
		{"11.222.333/0001-81", "11222333000181", nil},
		{"11222333000181", "11222333000181", nil},
		{"12.ABC.345/01DE-35", "12ABC34501DE35", nil}, // the Receita Federal's example
		{"12.abc.345/01de-35", "12ABC34501DE35", nil},
		{"12ABC34501DE36", "", ErrCheckDigits},
		{"11222333000180", "", ErrCheckDigits},
		{"00000000000000", "", ErrCheckDigits},
		{"12ABC34501DEA5", "", ErrCharacters}, // check digits are numeric
		{"12ABC34501D#35", "", ErrCharacters},
		{"1122233300018", "", ErrLength},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseCNPJ(tc.in)
			require.ErrorIs(t, err, tc.err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestMaskCPF(t *testing.T) {
	t.Parallel()
	require.Equal(t, "***.***.***-25", MaskCPF("52998224725"))
	require.Equal(t, "***.***.***-**", MaskCPF(""))
}

// FuzzParse: any input either fails or yields a document that parses to
// itself and has the right length; nothing panics.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"529.982.247-25", "12.ABC.345/01DE-35", "11222333000181", "", "////", "ÿÿÿ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if d, err := ParseCPF(s); err == nil {
			if len(d) != 11 {
				t.Fatalf("CPF %q has %d digits", d, len(d))
			}
			if again, err := ParseCPF(d); err != nil || again != d {
				t.Fatalf("CPF %q does not parse to itself: %q %v", d, again, err)
			}
		}
		if d, err := ParseCNPJ(s); err == nil {
			if len(d) != 14 {
				t.Fatalf("CNPJ %q has %d characters", d, len(d))
			}
			if again, err := ParseCNPJ(d); err != nil || again != d {
				t.Fatalf("CNPJ %q does not parse to itself: %q %v", d, again, err)
			}
		}
	})
}

func TestCPFOf(t *testing.T) {
	t.Parallel()
	for _, n := range []int{100_000_000, 300_000_007, 999_999_998, 52_998_224} {
		got := CPFOf(n)
		d, err := ParseCPF(got)
		if err != nil || d != got || got[:9] != fmt.Sprintf("%09d", n) {
			t.Errorf("CPFOf(%d) = %q: %v", n, got, err)
		}
	}
}
