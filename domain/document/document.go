// Package document validates and formats the Brazilian taxpayer numbers that
// identify customers: CPF (people, 11 digits) and CNPJ (companies, 14
// characters, alphanumeric since 2026), each with two check digits.
package document

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// Errors of Parse, safe to show to callers (they never echo the number).
var (
	ErrLength      = errors.New("wrong number of characters")
	ErrCharacters  = errors.New("invalid characters")
	ErrCheckDigits = errors.New("check digits do not match")
	ErrSeparators  = errors.New("separators only as in NNN.NNN.NNN-NN (CPF) or NN.NNN.NNN/NNNN-NN (CNPJ), or none")
	ErrSpaces      = errors.New("spaces inside the number")
)

// Type is the kind of a document.
type Type string

const (
	CPF  Type = "CPF"
	CNPJ Type = "CNPJ"
)

var (
	cpfMask  = regexp.MustCompile(`^[0-9]{3}\.[0-9]{3}\.[0-9]{3}-[0-9]{2}$`)
	cnpjMask = regexp.MustCompile(`^[0-9A-Za-z]{2}\.[0-9A-Za-z]{3}\.[0-9A-Za-z]{3}/[0-9A-Za-z]{4}-[0-9]{2}$`)
)

// Unformat returns the characters of a document written bare (digits, and
// letters of the 2026 CNPJ) or in its canonical mask (NNN.NNN.NNN-NN for a
// CPF, NN.NNN.NNN/NNNN-NN for a CNPJ), with any Unicode space around it
// trimmed; letters are upper-cased. Separators anywhere else, or spaces
// inside, are refused: a number typed that way is more likely wrong than
// formatted.
func Unformat(s string) (string, error) {
	s = strings.TrimFunc(s, unicode.IsSpace)
	switch {
	case cpfMask.MatchString(s), cnpjMask.MatchString(s):
		s = strings.NewReplacer(".", "", "-", "", "/", "").Replace(s)
	case strings.ContainsFunc(s, unicode.IsSpace):
		return "", ErrSpaces
	case strings.ContainsAny(s, ".-/"):
		return "", ErrSeparators
	}
	return strings.ToUpper(s), nil
}

// ParseCPF returns the 11 digits of a CPF given with or without formatting.
func ParseCPF(s string) (string, error) {
	d, err := Unformat(s)
	if err != nil {
		return "", err
	}
	if len(d) != 11 {
		return "", ErrLength
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return "", ErrCharacters
		}
	}
	if allSame(d) {
		return "", ErrCheckDigits
	}
	if cpfDigit(d[:9], 10) != d[9] || cpfDigit(d[:10], 11) != d[10] {
		return "", ErrCheckDigits
	}
	return d, nil
}

// CPFOf returns the valid CPF whose first nine digits are n (below
// 10^9; not a repeated digit, whose CPF is all one digit): distinct CPFs
// for demo data, imports and tests.
func CPFOf(n int) string {
	base := fmt.Sprintf("%09d", n%1_000_000_000)
	d := base + string(cpfDigit(base, 10))
	return d + string(cpfDigit(d, 11))
}

// cpfDigit computes a CPF check digit over base with weights from w down to 2.
func cpfDigit(base string, w int) byte {
	sum := 0
	for i := 0; i < len(base); i++ {
		sum += int(base[i]-'0') * (w - i)
	}
	r := sum * 10 % 11
	if r == 10 {
		r = 0
	}
	return byte('0' + r)
}

// ParseCNPJ returns the 14 characters of a CNPJ (numeric or the alphanumeric
// format of 2026) given with or without formatting.
func ParseCNPJ(s string) (string, error) {
	d, err := Unformat(s)
	if err != nil {
		return "", err
	}
	if len(d) != 14 {
		return "", ErrLength
	}
	for i := 0; i < len(d); i++ {
		c := d[i]
		digit := c >= '0' && c <= '9'
		if !digit && (i >= 12 || c < 'A' || c > 'Z') {
			return "", ErrCharacters
		}
	}
	if allSame(d) {
		return "", ErrCheckDigits
	}
	if cnpjDigit(d[:12]) != d[12] || cnpjDigit(d[:13]) != d[13] {
		return "", ErrCheckDigits
	}
	return d, nil
}

// cnpjDigit computes a CNPJ check digit: each character is worth its ASCII
// code minus 48 (so digits keep their value), weights cycle 2..9 from the right.
func cnpjDigit(base string) byte {
	sum, w := 0, 2
	for i := len(base) - 1; i >= 0; i-- {
		sum += int(base[i]-'0') * w
		if w++; w > 9 {
			w = 2
		}
	}
	r := sum % 11
	if r < 2 {
		return '0'
	}
	return byte('0' + 11 - r)
}

// Parse validates s as a document of type t.
func Parse(t Type, s string) (string, error) {
	switch t {
	case CPF:
		return ParseCPF(s)
	case CNPJ:
		return ParseCNPJ(s)
	default:
		return "", errors.New("type must be CPF or CNPJ")
	}
}

// Mask renders a document of type t with only its last two characters
// visible: the one form in which any interface shows a stored document.
func Mask(t Type, s string) string {
	if t == CNPJ {
		return MaskCNPJ(s)
	}
	return MaskCPF(s)
}

// ParseAny validates s as the document its length makes it: 11
// characters a CPF, any other count a CNPJ (whose error then says what is
// wrong), for inputs that may hold either.
func ParseAny(s string) (Type, string, error) {
	d, err := Unformat(s)
	if err != nil {
		return "", "", err
	}
	t := CNPJ
	if len(d) == 11 {
		t = CPF
	}
	d, err = Parse(t, s)
	if err != nil {
		return "", "", err
	}
	return t, d, nil
}

// MaskCPF renders a CPF with only its last two digits visible:
// ***.***.***-25.
func MaskCPF(digits string) string {
	if len(digits) < 2 {
		return "***.***.***-**"
	}
	return "***.***.***-" + digits[len(digits)-2:]
}

// MaskCNPJ renders a CNPJ with only its last two characters visible:
// **.***.***/****-35.
func MaskCNPJ(chars string) string {
	if len(chars) < 2 {
		return "**.***.***/****-**"
	}
	return "**.***.***/****-" + chars[len(chars)-2:]
}

func allSame(s string) bool {
	return strings.Count(s, s[:1]) == len(s)
}
