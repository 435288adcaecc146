package panel

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/viewer"
)

// --- Signing in -------------------------------------------------------------

// errNotAUser is a valid token that is not a back-office user's.
var errNotAUser = errors.New("not a back-office user")

// authenticate verifies a token as the bearer authentication does and keeps
// back-office users only: an integration's client token has no business
// here.
func (p *panel) authenticate(ctx context.Context, token string) (viewer.Viewer, error) {
	v, err := p.app.Auth.Authenticate(ctx, token)
	if err != nil {
		return viewer.Viewer{}, err
	}
	if v.Role != viewer.RoleAdmin && v.Role != viewer.RoleAnalyst {
		return viewer.Viewer{}, errNotAUser
	}
	return v, nil
}

// session authenticates the session cookie and puts its viewer in the
// request's context; without a valid one it shows the sign-in page.
func (p *panel) session(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status := http.StatusUnauthorized
		back := ""
		if r.Method == http.MethodGet {
			back = r.URL.RequestURI()
			if r.URL.Path == Base || r.URL.Path == Base+"/" {
				status = http.StatusOK
			}
		}
		c, err := r.Cookie(cookieName)
		if err != nil || c.Value == "" {
			p.signInPage(w, r, status, "", back)
			return
		}
		v, err := p.authenticate(r.Context(), c.Value)
		if err != nil {
			http.SetCookie(w, sessionCookie(r, ""))
			p.signInPage(w, r, status, "Your session has ended: the token expired or is no longer valid. Sign in again.", back)
			return
		}
		next.ServeHTTP(w, r.WithContext(viewer.NewContext(r.Context(), v)))
	})
}

// sessionCookie returns the session cookie holding token, or removing it
// when token is empty.
func sessionCookie(r *http.Request, token string) *http.Cookie {
	c := &http.Cookie{Name: cookieName, Value: token, Path: Base, HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode}
	if token == "" {
		c.MaxAge = -1
	}
	return c
}

func (p *panel) signInPage(w http.ResponseWriter, r *http.Request, status int, msg, next string) {
	p.render(w, r, status, "signin", page{Title: "Sign in", Error: msg, Flash: flashes[r.URL.Query().Get("done")],
		CanSSO: p.app.Auth.CanSignIn(), Next: localNext(next)})
}

// localNext keeps a return path to a page of the panel, else the home page.
func localNext(next string) string {
	u, err := url.Parse(next)
	if next == "" || err != nil || u.Scheme != "" || u.Host != "" || strings.ContainsAny(next, "\\\r\n") {
		return Base + "/"
	}
	clean := path.Clean("/" + u.Path)
	if clean != Base && !strings.HasPrefix(clean, Base+"/") {
		return Base + "/"
	}
	if strings.HasSuffix(u.Path, "/") && clean != "/" {
		clean += "/"
	}
	return (&url.URL{Path: clean}).EscapedPath() // a flash message of the query was for the page seen then
}

// ssoPage receives the end of the SSO sign-in: sso.js posts the token of
// the URL fragment to signIn.
func (p *panel) ssoPage(w http.ResponseWriter, r *http.Request) {
	p.render(w, r, http.StatusOK, "sso", page{Title: "Signing in"})
}

// signIn checks a token, pasted or from SSO, and keeps it in the session
// cookie.
func (p *panel) signIn(w http.ResponseWriter, r *http.Request) {
	if !p.parseForm(w, r) {
		return
	}
	token := strings.TrimSpace(r.PostFormValue("token"))
	if rest, ok := strings.CutPrefix(token, "Bearer "); ok {
		token = strings.TrimSpace(rest)
	}
	next := r.PostFormValue("next")
	var msg string
	switch {
	case token == "":
		msg = "Paste a token to sign in."
	case len(token) > maxCookieToken:
		msg = "This token is too long for the panel to keep in a browser cookie; ask for a shorter one."
	default:
		_, err := p.authenticate(r.Context(), token)
		switch {
		case errors.Is(err, errNotAUser):
			msg = "This is an API client's token. The panel needs a back-office user's token, such as one of \"fideliza user token\"."
		case errors.Is(err, auth.ErrInvalidToken):
			msg = "The token was not accepted: it is malformed, expired, of an inactive tenant, or of another installation."
		case err != nil:
			p.fail(w, r, err)
			return
		}
	}
	if msg != "" {
		p.signInPage(w, r, http.StatusUnauthorized, msg, next)
		return
	}
	http.SetCookie(w, sessionCookie(r, token))
	http.Redirect(w, r, localNext(next), http.StatusSeeOther)
}

// signInByLink spends the code of a sign-in link (auth.NewSignInCode, the
// link serve --demo prints) and keeps the user token it is worth in the
// session cookie.
func (p *panel) signInByLink(w http.ResponseWriter, r *http.Request) {
	token, err := p.app.Auth.RedeemSignInCode(r.Context(), r.URL.Query().Get("code"))
	switch {
	case errors.Is(err, auth.ErrSignInLink):
		p.signInPage(w, r, http.StatusUnauthorized, fmt.Sprintf("This sign-in link was used already or expired: "+
			"a link works once, for %s, on the process that printed it. Start serve --demo again for a new one, "+
			"or paste a token of \"fideliza user token\".", auth.SignInLinkLifetime), "")
		return
	case err != nil:
		p.fail(w, r, err)
		return
	}
	http.SetCookie(w, sessionCookie(r, token))
	http.Redirect(w, r, Base+"/", http.StatusSeeOther)
}

// signOut forgets the session. The token itself stays valid until it
// expires: it is the user's, not the panel's.
func (p *panel) signOut(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, sessionCookie(r, ""))
	http.Redirect(w, r, Base+"/?done=signed-out", http.StatusSeeOther)
}
