package auth

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/fideliza/fideliza/viewer"
)

// SignInLinkLifetime is how long a sign-in link works: long enough to open
// it from the terminal that printed it, short enough that a copy found
// later in a scrollback or a log is dead.
const SignInLinkLifetime = 15 * time.Minute

// ErrSignInLink is a sign-in code that is unknown, used already or expired.
var ErrSignInLink = errors.New("sign-in link used already, expired, or of another process")

// signInLinks are the sign-in codes this process handed out and not yet
// redeemed. They live in memory: a link works on the process that printed
// it, and a restart voids it.
type signInLinks struct {
	mu    sync.Mutex
	codes map[string]signInGrant
}

// signInGrant is what a code is redeemed for.
type signInGrant struct {
	tenantID, subject string
	role              viewer.Role
	expires           time.Time
}

// NewSignInCode returns a single-use code that RedeemSignInCode exchanges,
// within SignInLinkLifetime, for a back-office user token of tenantID with
// role, named subject: the sign-in link serve --demo prints, which spares a
// reader minting a token for the right issuer.
func (s *Service) NewSignInCode(tenantID string, role viewer.Role, subject string) string {
	code := randomID()
	s.links.mu.Lock()
	defer s.links.mu.Unlock()
	if s.links.codes == nil {
		s.links.codes = map[string]signInGrant{}
	}
	now := time.Now()
	for c, g := range s.links.codes { // the expired codes nobody redeemed
		if now.After(g.expires) {
			delete(s.links.codes, c)
		}
	}
	s.links.codes[code] = signInGrant{tenantID: tenantID, subject: subject, role: role, expires: now.Add(SignInLinkLifetime)}
	return code
}

// RedeemSignInCode spends code and returns a user token of its grant,
// living DefaultUserTokenLifetime; ErrSignInLink when the code is unknown,
// spent or expired.
func (s *Service) RedeemSignInCode(ctx context.Context, code string) (string, error) {
	s.links.mu.Lock()
	g, ok := s.links.codes[code]
	delete(s.links.codes, code)
	s.links.mu.Unlock()
	if !ok || time.Now().After(g.expires) {
		return "", ErrSignInLink
	}
	return s.IssueUserToken(ctx, g.tenantID, g.role, g.subject, DefaultUserTokenLifetime)
}
