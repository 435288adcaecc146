package app

import "github.com/fideliza/fideliza/ent"

// POS registration statuses of a customer (the identify response's status,
// besides NOT_FOUND).
const (
	POSStatusPreRegister = "PRE_REGISTER"
	POSStatusIncomplete  = "INCOMPLETE"
	POSStatusComplete    = "COMPLETE"
)

// POSStatus derives a customer's registration status from the profile: it is
// never stored, so it cannot disagree with the fields it depends on.
func POSStatus(c *ent.Customer) string {
	switch {
	case c.Name == "":
		return POSStatusPreRegister
	case c.Email != nil && c.Phone != nil && c.BirthDate != nil:
		return POSStatusComplete
	default:
		return POSStatusIncomplete
	}
}
