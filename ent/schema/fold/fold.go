// Package fold makes the accent- and case-insensitive form of text that name
// search compares: "José Conceição" and "jose conceicao" fold alike.
package fold

import (
	"strings"
	"unicode"

	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// Text returns the folded form of s: decomposed, without combining marks,
// lower-cased, with runs of spaces collapsed.
func Text(s string) string {
	t := transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)
	out, _, err := transform.String(t, s)
	if err != nil {
		out = s
	}
	return strings.Join(strings.Fields(strings.ToLower(out)), " ")
}
