// Package opt holds Field, a value that may be absent, explicitly null or
// set: what a JSON merge patch (RFC 7396) or an optional GraphQL input says
// about one field.
package opt

import (
	"bytes"
	"encoding/json"
)

// Field is one field of an input.
type Field[T any] struct {
	Set   bool // present in the input (possibly as null)
	Null  bool // present as null: clear the value
	Value T
}

// Of returns a field set to v.
func Of[T any](v T) Field[T] { return Field[T]{Set: true, Value: v} }

// Null returns a field present as null.
func Null[T any]() Field[T] { return Field[T]{Set: true, Null: true} }

// Present reports whether the field carries a value (set and not null).
func (f Field[T]) Present() bool { return f.Set && !f.Null }

// Ptr returns the value, or nil when absent or null.
func (f Field[T]) Ptr() *T {
	if !f.Present() {
		return nil
	}
	v := f.Value
	return &v
}

// UnmarshalJSON marks the field present; null marks it null.
func (f *Field[T]) UnmarshalJSON(b []byte) error {
	f.Set = true
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		f.Null = true
		return nil
	}
	return json.Unmarshal(b, &f.Value)
}
