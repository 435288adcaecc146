// Package guard is the one check of what an operation may take from any
// interface (/v1, the point of sale, GraphQL, the CLI): text both databases
// store (valid UTF-8, no NUL, bounded length), numbers both store
// (numeric(20,8): under 10^12 in absolute value), with numeric literals
// bounded before they are parsed (a literal of a million digits costs
// seconds of CPU to parse and compare), and instants both read back (the
// years 0001 to 9999 in UTC).
package guard

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/opt"
)

const (
	// MaxText bounds any text an operation takes (names, descriptions,
	// addresses, search terms), in bytes.
	MaxText = 4096
	// MaxNumberLiteral bounds a numeric literal, in characters.
	MaxNumberLiteral = 64
	// maxExponent bounds a literal's exponent, so that comparing it is cheap.
	maxExponent = 64
)

// maxMagnitude is the first number numeric(20,8) cannot store.
var maxMagnitude = decimal.New(1, 12)

// Text adds a problem of field when s is not text both databases store.
func Text(p *apperr.Problems, field, s string) {
	if problem := textProblem(s); problem != "" {
		p.Add(field, "%s", problem)
	}
}

// textProblem says why s is not text both databases store, or "".
func textProblem(s string) string {
	switch {
	case len(s) > MaxText:
		return fmt.Sprintf("must be at most %d bytes", MaxText)
	case !utf8.ValidString(s):
		return "must be valid UTF-8 text"
	case strings.IndexByte(s, 0) >= 0:
		return `must not contain the NUL character (\u0000)`
	}
	return ""
}

// Number parses a numeric literal, refusing one too long to parse cheaply
// or out of what both databases store; nil with a problem of field when it
// is refused.
func Number(p *apperr.Problems, field, literal string) *decimal.Decimal {
	if len(literal) > MaxNumberLiteral {
		p.Add(field, "must be a number of at most %d characters", MaxNumberLiteral)
		return nil
	}
	d, err := decimal.NewFromString(literal)
	if err != nil {
		p.Add(field, "must be a number")
		return nil
	}
	if !Magnitude(p, field, d) {
		return nil
	}
	return &d
}

// Magnitude adds a problem of field and answers false when d is out of what
// both databases store.
func Magnitude(p *apperr.Problems, field string, d decimal.Decimal) bool {
	if problem := magnitudeProblem(d); problem != "" {
		p.Add(field, "%s", problem)
		return false
	}
	return true
}

// magnitudeProblem says why d is out of what both databases store, or "".
func magnitudeProblem(d decimal.Decimal) string {
	switch {
	case d.Exponent() > maxExponent || (d.Exponent() >= -maxExponent && d.Abs().Cmp(maxMagnitude) >= 0):
		return "must be less than " + maxMagnitude.String() + " in absolute value"
	case d.Exponent() < -maxExponent:
		return fmt.Sprintf("must have at most %d decimal places", maxExponent)
	}
	return ""
}

// Time adds a problem of field and answers false when t is out of what
// both databases read back: instants are stored in UTC, and 9999-12-31T23:59:59-23:59, in the
// year 10000 there, is stored by SQLite but cannot be read (nor can
// 0000-01-01T00:00:00+01:00, in the year -1), which broke every list that
// held it.
func Time(p *apperr.Problems, field string, t time.Time) bool {
	if problem := timeProblem(t); problem != "" {
		p.Add(field, "%s", problem)
		return false
	}
	return true
}

func timeProblem(t time.Time) string {
	if y := t.UTC().Year(); y < 1 || y > 9999 {
		return "must lie between the years 0001 and 9999 in UTC"
	}
	return ""
}

var (
	timeType    = reflect.TypeFor[time.Time]()
	decimalType = reflect.TypeFor[decimal.Decimal]()
	rawJSONType = reflect.TypeFor[json.RawMessage]()
	optPackage  = reflect.TypeFor[opt.Field[string]]().PkgPath()
)

// Input checks every text, number and instant of an operation's input (a
// struct, and what it holds: pointers, slices, maps, opt fields), naming
// each field as the interfaces do (CustomerID → customer_id,
// Items[2].UnitPrice → items[2].unit_price).
func Input(p *apperr.Problems, v any) { Field(p, "", v) }

// Field checks a value named field (and what it holds, as Input does).
func Field(p *apperr.Problems, field string, v any) {
	newWalker(p, &snakeNames, field).walk(reflect.ValueOf(v))
}

// FieldCamel is Field for interfaces whose documents name fields in
// camelCase (unitPrice), as the point-of-sale document does.
func FieldCamel(p *apperr.Problems, field string, v any) {
	newWalker(p, &camelNames, field).walk(reflect.ValueOf(v))
}

// JSON adds a problem of field when raw JSON holds text no database stores:
// invalid UTF-8 or the escape \u0000 (PostgreSQL's jsonb refuses it).
func JSON(p *apperr.Problems, field string, raw []byte) {
	if problem := jsonProblem(raw); problem != "" {
		p.Add(field, "%s", problem)
	}
}

func jsonProblem(raw []byte) string {
	switch {
	case !utf8.Valid(raw):
		return "must be valid UTF-8 text"
	case escapesNUL(raw):
		return `must not contain the NUL character (\u0000)`
	}
	return ""
}

// escapesNUL reports whether a string of the JSON text b holds the escape
// \u0000 (a raw NUL byte is not valid JSON at all).
func escapesNUL(b []byte) bool {
	in := false
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '"':
			in = !in
		case b[i] == '\\' && in:
			if i+5 < len(b) && b[i+1] == 'u' && string(b[i+2:i+6]) == "0000" {
				return true
			}
			i++ // the escaped character, which may be a quote
		}
	}
	return false
}

// walker walks an input, naming fields in its interface's style. A field's
// name is written out only when it has a problem: an operation's input is
// walked on every request, and nearly all are fine, so the walk keeps where
// it is as a stack of steps and allocates nothing for it.
type walker struct {
	p     *apperr.Problems
	names *fieldNames
	at    []step
}

// step is one step of the path to a value: a field (or map key) of its
// parent named name, or its element number index.
type step struct {
	name    string
	element bool
	index   int
}

func newWalker(p *apperr.Problems, names *fieldNames, field string) *walker {
	w := &walker{p: p, names: names, at: make([]step, 0, 8)}
	if field != "" {
		w.at = append(w.at, step{name: field})
	}
	return w
}

// field is the name of where the walk is, as the interfaces write it.
func (w *walker) field() string {
	var b strings.Builder
	for i, s := range w.at {
		switch {
		case s.element:
			b.WriteString("[" + strconv.Itoa(s.index) + "]")
		case i > 0:
			b.WriteString("." + s.name)
		default:
			b.WriteString(s.name)
		}
	}
	return b.String()
}

func (w *walker) problem(problem string) {
	if problem != "" {
		w.p.Add(w.field(), "%s", problem)
	}
}

// into walks v one step further down.
func (w *walker) into(s step, v reflect.Value) {
	w.at = append(w.at, s)
	w.walk(v)
	w.at = w.at[:len(w.at)-1]
}

func (w *walker) walk(v reflect.Value) {
	if !v.IsValid() {
		return
	}
	switch t := v.Type(); {
	case t == timeType:
		if v.CanAddr() { // as for decimals, below
			w.problem(timeProblem(*v.Addr().Interface().(*time.Time)))
		} else {
			w.problem(timeProblem(v.Interface().(time.Time)))
		}
		return
	case t == decimalType:
		if v.CanAddr() { // its address converts to an interface without a copy
			w.problem(magnitudeProblem(*v.Addr().Interface().(*decimal.Decimal)))
		} else {
			w.problem(magnitudeProblem(v.Interface().(decimal.Decimal)))
		}
		return
	case t == rawJSONType:
		w.problem(jsonProblem(v.Bytes()))
		return
	case t.Kind() == reflect.Struct && t.PkgPath() == optPackage:
		// An opt.Field: its value, when present, under the field's name.
		if v.FieldByName("Set").Bool() && !v.FieldByName("Null").Bool() {
			w.walk(v.FieldByName("Value"))
		}
		return
	}
	switch v.Kind() {
	case reflect.String:
		w.problem(textProblem(v.String()))
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			w.walk(v.Elem())
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return // raw JSON or bytes: checked where decoded
		}
		for i := range v.Len() {
			w.into(step{element: true, index: i}, v.Index(i))
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			key := step{name: it.Key().String()}
			w.into(key, it.Key())
			w.into(key, it.Value())
		}
	case reflect.Struct:
		for i, name := range w.names.of(v.Type()) {
			if name != "" {
				w.into(step{name: name}, v.Field(i))
			}
		}
	default: // numbers, booleans: nothing either database refuses
	}
}

// fieldNames are the interface names of struct types' fields, made once
// per type: "" for an unexported field.
type fieldNames struct {
	style func(string) string
	types sync.Map // reflect.Type → []string
}

var (
	snakeNames = fieldNames{style: snake}
	camelNames = fieldNames{style: camel}
)

func (n *fieldNames) of(t reflect.Type) []string {
	if names, ok := n.types.Load(t); ok {
		return names.([]string)
	}
	names := make([]string, t.NumField())
	for i := range names {
		if f := t.Field(i); f.IsExported() {
			names[i] = n.style(f.Name)
		}
	}
	n.types.Store(t, names)
	return names
}

// camel turns a Go field name into camelCase: UnitPrice → unitPrice,
// GTIN → gtin, SessionID → sessionId.
func camel(name string) string {
	parts := strings.Split(snake(name), "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// snake turns a Go field name into the interfaces' name: CustomerID →
// customer_id, CPF → cpf, UnitPrice → unit_price.
func snake(name string) string {
	var b strings.Builder
	runes := []rune(name)
	for i, r := range runes {
		if unicode.IsUpper(r) {
			if i > 0 && (unicode.IsLower(runes[i-1]) || (i+1 < len(runes) && unicode.IsLower(runes[i+1]))) {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}
