package kernel

import (
	"strings"

	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/guard"
	"github.com/fideliza/fideliza/ent"
)

// Guarded refuses an operation's input that no database stores (package
// guard), whatever interface it came from. args are name, value pairs; a
// struct input is passed with the name "" and named by its fields.
func Guarded(args ...any) error { return guardProblems(args).Err() }

// GuardedPOS is Guarded for the point-of-sale operations, whose document
// answers every field problem as a malformed request.
func GuardedPOS(args ...any) error { return guardProblems(args, guard.FieldCamel).Malformed() }

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

// MaxIDLength bounds an identifier an integration chooses (an order id).
const MaxIDLength = 128

// RequireID adds a problem when v, an identifier, is empty or too long.
func RequireID(p *apperr.Problems, field, v string) {
	switch {
	case strings.TrimSpace(v) == "":
		p.Add(field, "is required")
	case len(v) > MaxIDLength:
		p.Add(field, "must be at most %d characters", MaxIDLength)
	}
}

// NotFoundAs turns ent's not-found error into the operations' one.
func NotFoundAs(err error, what string) error {
	if ent.IsNotFound(err) {
		return apperr.NotFound(what)
	}
	return err
}
