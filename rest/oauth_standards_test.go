package rest_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/storage/storagetest"
)

// oauthTextChars is what RFC 6749 §5.2 allows in error_description.
var oauthTextChars = regexp.MustCompile(`^[\x20-\x21\x23-\x5B\x5D-\x7E]*$`)

// TestOAuthStandards (issue 21): access tokens carry RFC 9068's client_id;
// a token request repeating a parameter is invalid_request (RFC 6749 §3.2);
// every error_description keeps to RFC 6749's characters, on the token
// endpoint and in bearer refusals.
func TestOAuthStandards(t *testing.T) {
	t.Parallel()
	storagetest.Each(t, func(t *testing.T, db *storage.DB) {
		f := newFixture(t, db)
		c := f.client(t, apiclient.KindOauth)

		payload := strings.Split(f.token(t, c, "customers:read"), ".")[1]
		raw, err := base64.RawURLEncoding.DecodeString(payload)
		require.NoError(t, err)
		var claims map[string]any
		require.NoError(t, json.Unmarshal(raw, &claims))
		require.Equal(t, c.Client.ID, claims["client_id"], "RFC 9068 §2.2: client_id")
		require.Equal(t, claims["sub"], claims["client_id"])

		for _, twice := range []url.Values{
			{"grant_type": {"client_credentials", "client_credentials"}},
			{"grant_type": {"client_credentials"}, "scope": {"customers:read", "loyalty:read"}},
			{"grant_type": {"client_credentials"}, "client_id": {c.Client.ID, c.Client.ID}, "client_secret": {c.Secret}},
		} {
			res := f.requestToken(t, twice, basicUnless(twice, c.Client.ID, c.Secret)...)
			require.Equal(t, http.StatusBadRequest, res.status, "%v: %s", twice, res.body)
			require.Equal(t, "invalid_request", res.json(t)["error"], "%v", twice)
		}

		for name, res := range map[string]response{
			"a scope with quotes and a backslash": f.requestToken(t, url.Values{"grant_type": {"client_credentials"}, "scope": {`a"b\c`}}, c.Client.ID, c.Secret),
			"a scope with a non-ASCII letter":     f.requestToken(t, url.Values{"grant_type": {"client_credentials"}, "scope": {"ação"}}, c.Client.ID, c.Secret),
			"an unknown issuer with quotes":       do(t, http.DefaultClient, bearerGet(t, f.srv.URL+"/v1/customers", unsignedToken(t, `{"iss":"a\"b"}`))),
		} {
			desc, _ := res.json(t)["error_description"].(string)
			require.NotEmpty(t, desc, "%s: %s", name, res.body)
			require.Regexp(t, oauthTextChars, desc, "%s", name)
			if challenge := res.header.Get("WWW-Authenticate"); strings.HasPrefix(challenge, "Bearer") {
				require.Contains(t, challenge, `error_description="`+desc+`"`, "%s", name)
			}
		}
	})
}

// basicUnless is the HTTP Basic credentials unless the form carries the
// client's own.
func basicUnless(form url.Values, id, secret string) []string {
	if form.Has("client_id") {
		return nil
	}
	return []string{id, secret}
}

func bearerGet(t *testing.T, u, token string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	return req
}

// unsignedToken is a JWT of payload with an empty signature.
func unsignedToken(t *testing.T, payload string) string {
	t.Helper()
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"ES256","typ":"at+jwt"}`)) + "." + enc([]byte(payload)) + "." + enc([]byte("x"))
}
