// Package experiment is the campaigns' experiments: which of a campaign's
// target customers it holds out as a control group (HeldOut), and what the
// campaign changed, treated against held out (Measure). It touches no
// database.
package experiment

import (
	"crypto/sha256"
	"encoding/binary"
)

// Holdouts are in basis points of the target customers: 1000 is 10%.
const (
	BasisPoints = 10000 // every customer
	MaxHoldout  = 5000  // the most a campaign holds out: half its customers
)

// HeldOut tells whether a campaign holding out basisPoints of its target
// customers holds out customerID. The side is a hash of the campaign and the
// customer, so a customer is on the same side on every channel, in every
// process, at any time, and each campaign draws its own control group; a
// larger holdout of the same campaign holds out the customers of a smaller
// one and more.
func HeldOut(customerID, campaignID string, basisPoints int) bool {
	if basisPoints <= 0 || customerID == "" {
		return false
	}
	return Draw(customerID, campaignID) < basisPoints
}

// Draw is the customer's place in the campaign's holdouts, uniform in
// [0, BasisPoints): the first 8 bytes of SHA-256 of the campaign's id, a NUL
// and the customer's id, as a big-endian integer, modulo BasisPoints.
func Draw(customerID, campaignID string) int {
	h := sha256.New()
	h.Write([]byte(campaignID))
	h.Write([]byte{0})
	h.Write([]byte(customerID))
	var sum [sha256.Size]byte
	return int(binary.BigEndian.Uint64(h.Sum(sum[:0])) % BasisPoints)
}
