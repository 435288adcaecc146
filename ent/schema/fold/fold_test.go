package fold

import "testing"

func TestText(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"José Conceição":     "jose conceicao",
		"  ÁGATHA   Müller ": "agatha muller",
		"joão":               "joao",
		"":                   "",
	}
	for in, want := range cases {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
}
