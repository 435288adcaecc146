package auth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// SignInPath is where the external provider sends a signing-in user back
// (the redirect URI to register there is the public URL plus this path).
const SignInPath = "/auth/callback"

// signInCookie carries a sign-in's state, PKCE verifier and return path
// between the redirect to the provider and the callback; it lives for
// signInTTL and only on SignInPath.
const (
	signInCookie = "fideliza_signin"
	signInTTL    = 10 * time.Minute
)

// signIn is the authorization code flow with PKCE of the external provider.
type signIn struct {
	oauth2 oauth2.Config
}

// signInState is the cookie's content.
type signInState struct {
	State    string `json:"s"`
	Verifier string `json:"v"`
	ReturnTo string `json:"r"`
}

// CanSignIn reports whether back-office users can sign in through the
// browser: an external provider with a client id is configured.
func (s *Service) CanSignIn() bool { return s.external != nil && s.external.signIn != nil }

// StartSignIn sends the browser to the external provider's sign-in page;
// after it, the user comes back to SignInPath and then to returnTo, a path
// of this service.
func (s *Service) StartSignIn(w http.ResponseWriter, r *http.Request, returnTo string) {
	if !s.CanSignIn() {
		http.Error(w, "single sign-on is not configured", http.StatusNotFound)
		return
	}
	st := signInState{State: randomToken(), Verifier: oauth2.GenerateVerifier(), ReturnTo: localPath(returnTo)}
	raw, _ := json.Marshal(st)
	http.SetCookie(w, &http.Cookie{
		Name: signInCookie, Value: base64.RawURLEncoding.EncodeToString(raw), Path: SignInPath,
		MaxAge: int(signInTTL.Seconds()), HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteLaxMode,
	})
	u := s.external.signIn.oauth2.AuthCodeURL(st.State, oauth2.S256ChallengeOption(st.Verifier))
	http.Redirect(w, r, u, http.StatusFound)
}

// FinishSignIn handles the provider's redirect to SignInPath: it checks the
// state, redeems the code with the PKCE verifier, and verifies the token it
// got as any bearer token. It returns the token (an access token when the
// provider's is a JWT this service accepts, else the ID token) and the path
// to return to.
func (s *Service) FinishSignIn(w http.ResponseWriter, r *http.Request) (token, returnTo string, err error) {
	if !s.CanSignIn() {
		return "", "", errors.New("single sign-on is not configured")
	}
	c, err := r.Cookie(signInCookie)
	if err != nil {
		return "", "", errors.New("the sign-in expired or was started elsewhere; start again")
	}
	http.SetCookie(w, &http.Cookie{Name: signInCookie, Path: SignInPath, MaxAge: -1, HttpOnly: true})
	var st signInState
	raw, err := base64.RawURLEncoding.DecodeString(c.Value)
	if err != nil || json.Unmarshal(raw, &st) != nil || st.State == "" {
		return "", "", errors.New("the sign-in cookie is damaged; start again")
	}
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		return "", "", errors.New("the provider refused the sign-in: " + e)
	}
	if q.Get("state") != st.State {
		return "", "", errors.New("the sign-in state does not match; start again")
	}
	ctx, cancel := context.WithTimeout(r.Context(), discoveryTimeout)
	defer cancel()
	tok, err := s.external.signIn.oauth2.Exchange(s.external.clientContext(ctx), q.Get("code"), oauth2.VerifierOption(st.Verifier))
	if err != nil {
		return "", "", errors.New("the provider did not accept the sign-in code")
	}
	candidates := []string{tok.AccessToken}
	if id, ok := tok.Extra("id_token").(string); ok {
		candidates = append(candidates, id)
	}
	for _, raw := range candidates {
		if _, err = s.Authenticate(r.Context(), raw); err == nil {
			return raw, st.ReturnTo, nil
		}
	}
	return "", "", err
}

// localPath keeps returnTo to a path of this service, so the callback can
// never send a user elsewhere.
func localPath(p string) string {
	u, err := url.Parse(p)
	if err != nil || u.Scheme != "" || u.Host != "" || !strings.HasPrefix(u.Path, "/") || strings.HasPrefix(p, "//") {
		return "/"
	}
	return u.RequestURI()
}

func randomToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
