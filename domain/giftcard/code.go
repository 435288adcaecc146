package giftcard

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// CodeAlphabet is Crockford's base32: digits and capitals without I, L, O
// and U, so a code read aloud or typed from a receipt is not mistaken.
const CodeAlphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// CodeLength is the characters of a code: 20 of 32 symbols are 100 random
// bits, so that guessing any of a tenant's cards is hopeless even under
// the per-client quota of lookups.
const CodeLength = 20

// CodeBits is the randomness of a code.
const CodeBits = CodeLength * 5

// NewCode returns a new random code, normalized (no separators).
func NewCode() string {
	raw := make([]byte, CodeLength)
	if _, err := rand.Read(raw); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	for i, b := range raw {
		raw[i] = CodeAlphabet[b&31] // 32 symbols: 5 uniform bits of each byte
	}
	return string(raw)
}

// FormatCode shows a normalized code in groups of four ("7K3M-…"), as it
// is printed and shown once.
func FormatCode(code string) string {
	var b strings.Builder
	for i := 0; i < len(code); i += 4 {
		if i > 0 {
			b.WriteByte('-')
		}
		b.WriteString(code[i:min(i+4, len(code))])
	}
	return b.String()
}

// NormalizeCode is the stored form of a code someone typed: capitals,
// without spaces and hyphens, O read as 0 and I or L as 1 (Crockford's
// rule). ok is false when what is left cannot be a code.
func NormalizeCode(typed string) (code string, ok bool) {
	var b strings.Builder
	for _, r := range strings.ToUpper(typed) {
		switch r {
		case ' ', '-':
			continue
		case 'O':
			r = '0'
		case 'I', 'L':
			r = '1'
		}
		if r > 'Z' || !strings.ContainsRune(CodeAlphabet, r) {
			return "", false
		}
		b.WriteRune(r)
	}
	return b.String(), b.Len() == CodeLength
}

// HashCode is what is stored of a normalized code. A fast hash is enough,
// as for client secrets: 100 random bits cannot be found from their
// SHA-256.
func HashCode(code string) string {
	sum := sha256.Sum256([]byte(code))
	return hex.EncodeToString(sum[:])
}

// Last4 is the visible tail of a normalized code.
func Last4(code string) string { return code[len(code)-4:] }
