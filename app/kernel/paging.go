package kernel

import "github.com/fideliza/fideliza/domain/apperr"

// Page sizes of every list and connection: unbounded pages would let one
// request read a whole table.
const (
	DefaultPageSize = 20
	MaxPageSize     = 100
)

// ValidPageSize says whether n is an allowed page size.
func ValidPageSize(n int) bool { return n >= 1 && n <= MaxPageSize }

// CheckLimit refuses a list's limit outside 1..MaxPageSize.
func CheckLimit(n int) error {
	if !ValidPageSize(n) {
		return apperr.Invalid("limit", "must be between 1 and %d", MaxPageSize)
	}
	return nil
}
