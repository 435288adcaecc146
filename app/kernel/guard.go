package kernel

import (
	"strings"

	"github.com/shopspring/decimal"

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

// MaxOrderAmount bounds an order's value in R$: far above any order,
// within the amount columns.
const MaxOrderAmount = 1_000_000_000

// CheckOrderAmount adds a problem of field when v, an order's payable
// value, is not positive, not in whole cents or above MaxOrderAmount, or is
// missing though required.
func CheckOrderAmount(p *apperr.Problems, field string, v *decimal.Decimal, required bool) {
	switch {
	case v == nil && required:
		p.Add(field, "is required")
	case v != nil && (!v.IsPositive() || !v.Equal(v.Truncate(2)) || v.GreaterThan(decimal.NewFromInt(MaxOrderAmount))):
		p.Add(field, "must be positive, in whole cents, at most %d", MaxOrderAmount)
	}
}

// CheckCapture refuses the capture of an online order's hold (points or a
// wallet's) without the order's id or its payable value.
func CheckCapture(orderID string, orderAmount *decimal.Decimal) error {
	var p apperr.Problems
	RequireID(&p, "order_id", orderID)
	CheckOrderAmount(&p, "order_amount", orderAmount, true)
	return p.Err()
}

// NotFoundAs turns ent's not-found error into the operations' one.
func NotFoundAs(err error, what string) error {
	if ent.IsNotFound(err) {
		return apperr.NotFound(what)
	}
	return err
}

// checkLabels adds problems of field when list, store codes or groups,
// holds more than limit entries or one that is empty, longer than 64 bytes
// or padded with spaces (it would never match what a point of sale sends).
func CheckLabels(p *apperr.Problems, field string, list []string, limit int) {
	if len(list) > limit {
		p.Add(field, "must hold at most %d entries", limit)
	}
	for i, v := range list {
		if strings.TrimSpace(v) != v || v == "" || len(v) > 64 {
			p.Add(field, "item %d must be 1 to 64 characters without spaces around", i)
		}
	}
}
