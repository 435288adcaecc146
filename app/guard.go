package app

import (
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/guard"
)

// guarded refuses an operation's input that no database stores (package
// guard), whatever interface it came from. args are name, value pairs; a
// struct input is passed with the name "" and named by its fields.
func guarded(args ...any) error { return guardProblems(args).Err() }

// guardedPOS is guarded for the point-of-sale operations, whose document
// answers every field problem as a malformed request.
func guardedPOS(args ...any) error { return guardProblems(args, guard.FieldCamel).Malformed() }

func guardProblems(args []any, check ...func(*apperr.Problems, string, any)) apperr.Problems {
	field := guard.Field
	if len(check) > 0 {
		field = check[0]
	}
	var p apperr.Problems
	for i := 0; i+1 < len(args); i += 2 {
		field(&p, args[i].(string), args[i+1])
	}
	return p
}
