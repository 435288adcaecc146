// Package auth is the OAuth 2.0 token service and the verification of the
// credentials of every interface: client secrets, signed access tokens, and
// the keys that sign them.
package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
)

// secretPrefix marks Fideliza secrets so secret scanners can recognise them.
const secretPrefix = "fzs_"

// NewSecret returns a new client secret (256 random bits) and the hash that is
// stored in its place.
func NewSecret() (secret, hash string) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	secret = secretPrefix + base64.RawURLEncoding.EncodeToString(b)
	return secret, HashSecret(secret)
}

// HashSecret returns the stored form of a secret. A fast hash is enough:
// a 256-bit random secret cannot be guessed from its SHA-256, and a slow hash
// on every POS request would cost more than it protects.
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// SecretMatches compares a presented secret with a stored hash in constant time.
func SecretMatches(secret, hash string) bool {
	return subtle.ConstantTimeCompare([]byte(HashSecret(secret)), []byte(hash)) == 1
}
