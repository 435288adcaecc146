package sealed

import (
	"database/sql"
	"database/sql/driver"

	"entgo.io/ent/schema/field"
)

// Text is the value scanner of a sealed string field: the Go value is the
// clear text, the column holds it sealed. Its ent predicates compare sealed
// values, which never match (each sealing differs): find rows by the field's
// blind index instead.
var Text = field.ValueScannerFunc[string, *sql.NullString]{
	V: func(plain string) (driver.Value, error) { return Seal(plain) },
	S: func(v *sql.NullString) (string, error) {
		if !v.Valid {
			return "", nil
		}
		return Open(v.String)
	},
}

// Bytes is the value scanner of a sealed bytes field: import files, private
// signing keys. A value without a key id in front is one stored in clear
// before the field was sealed, and reads as it is.
var Bytes = field.ValueScannerFunc[[]byte, *sql.Null[[]byte]]{
	V: func(plain []byte) (driver.Value, error) { return SealBytes(plain) },
	S: func(v *sql.Null[[]byte]) ([]byte, error) {
		if !v.Valid {
			return nil, nil
		}
		return OpenBytes(v.V)
	},
}
