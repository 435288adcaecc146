package auth

import (
	"context"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	lru "github.com/hashicorp/golang-lru/v2"
)

// A client sends the same access token with every request until it expires;
// checking its signature and claims again each time was 9% of validate's
// CPU. rememberingVerifier keeps the tokens its verifier accepted, by their
// exact bytes, for at most rememberFor and never past their expiry: a key
// retired or a verifier changed is seen within rememberFor. Every other
// check of a token (its client still valid, its tenant active, nbf) runs on
// every request as before.
const (
	rememberFor      = time.Minute
	rememberedTokens = 1024
)

type rememberingVerifier struct {
	next     tokenVerifier
	verified *lru.Cache[string, rememberedToken]
}

type rememberedToken struct {
	token *oidc.IDToken
	until time.Time
}

func rememberVerified(next tokenVerifier) tokenVerifier {
	verified, err := lru.New[string, rememberedToken](rememberedTokens)
	if err != nil {
		panic(err) // only for a size below 1
	}
	return rememberingVerifier{next: next, verified: verified}
}

func (v rememberingVerifier) Verify(ctx context.Context, raw string) (*oidc.IDToken, error) {
	now := time.Now()
	if r, ok := v.verified.Get(raw); ok && now.Before(r.until) {
		return r.token, nil
	}
	tok, err := v.next.Verify(ctx, raw)
	if err != nil {
		return nil, err
	}
	until := now.Add(rememberFor)
	if tok.Expiry.Before(until) {
		until = tok.Expiry
	}
	v.verified.Add(raw, rememberedToken{token: tok, until: until})
	return tok, nil
}
