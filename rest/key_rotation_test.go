package rest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
	"github.com/fideliza/fideliza/testclock"
)

// cachingVerifier is a verifier of the strict kind: it fetches the JWKS,
// keeps it for the response's Cache-Control max-age, and never refetches
// early, not even for a kid it does not know.
type cachingVerifier struct {
	t       *testing.T
	url     string
	now     func() time.Time
	set     jose.JSONWebKeySet
	expires time.Time
	fetches int
}

func (v *cachingVerifier) verify(token string) error {
	v.t.Helper()
	if !v.now().Before(v.expires) {
		res, err := http.Get(v.url)
		require.NoError(v.t, err)
		defer res.Body.Close()
		require.NoError(v.t, json.NewDecoder(res.Body).Decode(&v.set))
		cc := res.Header.Get("Cache-Control")
		_, after, ok := strings.Cut(cc, "max-age=")
		require.True(v.t, ok, "Cache-Control %q", cc)
		age, err := strconv.Atoi(after)
		require.NoError(v.t, err)
		v.expires = v.now().Add(time.Duration(age) * time.Second)
		v.fetches++
	}
	jws, err := jose.ParseSignedCompact(token, []jose.SignatureAlgorithm{jose.ES256})
	require.NoError(v.t, err)
	keys := v.set.Key(jws.Signatures[0].Header.KeyID)
	if len(keys) == 0 {
		return &unknownKid{jws.Signatures[0].Header.KeyID}
	}
	_, err = jws.Verify(keys[0])
	return err
}

type unknownKid struct{ kid string }

func (e *unknownKid) Error() string { return "unknown kid " + e.kid }

// TestKeyRotationWithCachingVerifier (issue 21): through a rotation, a
// verifier that caches the JWKS for its max-age and never refetches early
// accepts every token the service issues, new key's and old key's alike:
// a new key is published one cache lifetime before it signs, and a retired
// one stays published while its tokens live.
func TestKeyRotationWithCachingVerifier(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newFixture(t, db)
		c := f.client(t, apiclient.KindOauth)
		clock := testclock.New(time.Now())
		f.app.Auth.Keys.Clock = clock.Now
		v := &cachingVerifier{t: t, url: f.srv.URL + "/.well-known/jwks.json", now: clock.Now}

		var issued []string
		step := func(d time.Duration) {
			t.Helper()
			clock.Advance(d)
			tok, err := f.app.Auth.IssueToken(context.Background(), auth.TokenRequest{
				GrantType: "client_credentials", ClientID: c.Client.ID, ClientSecret: c.Secret})
			require.NoError(t, err)
			issued = append(issued, tok.AccessToken)
			for i, tok := range issued {
				require.NoError(t, v.verify(tok), "token %d of %d at +%v", i+1, len(issued), d)
			}
		}
		step(0) // the verifier caches the first key set
		kids := map[string]bool{}
		for round := range 3 {
			_, err := f.app.Auth.Keys.Rotate(context.Background())
			require.NoError(t, err, "rotation %d", round)
			// Every minute through PublishLead and one cache lifetime more.
			for elapsed := time.Duration(0); elapsed <= auth.PublishLead+auth.JWKSMaxAge; elapsed += time.Minute {
				step(time.Minute)
			}
		}
		for _, tok := range issued {
			kids[jwtHeader(t, tok)["kid"].(string)] = true
		}
		require.Len(t, kids, 4, "tokens were signed by the first key and each rotation's")
		require.Greater(t, v.fetches, 3, "the verifier refetched as its cache expired")
	})
}
