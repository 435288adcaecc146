// Package panel serves the developer panel: server-rendered pages where a
// back-office user signs in, sees the tenants they manage, creates sandboxes
// and their credentials, and resets them. Every file the pages load is
// embedded in the binary, so the panel works offline and under a strict
// Content-Security-Policy; the only script is the SSO page's.
package panel

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/ent/schema/viewer"
	"github.com/fideliza/fideliza/httperr"
	"github.com/fideliza/fideliza/panel/chart"
	"github.com/fideliza/fideliza/secheaders"
	"github.com/fideliza/fideliza/webassets"
)

// Base is the path the service mounts the panel at: the pages' links and
// the session cookie's path.
const Base = "/panel"

const (
	// cookieName holds the signed-in user's token, which every request
	// authenticates again.
	cookieName = "fideliza_panel"
	// maxCookieToken bounds the tokens the panel keeps: browsers drop
	// cookies over 4096 bytes, name and attributes included.
	maxCookieToken = 3800
	// maxFormBytes bounds a form; the largest field is a pasted token.
	maxFormBytes = 64 << 10
	// maxNameLength bounds the names typed for sandboxes and clients.
	maxNameLength = 200
)

// csp allows only our own origin, with no inline script or style. base-uri
// and form-action, which default-src does not cover, are closed to other
// sites.
const csp = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"font-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// DeliveryRow is one webhook delivery, as the panel lists them.
type DeliveryRow struct {
	Event, URL, Status string
	Attempts           int
	LastStatus         int // the HTTP status of the last attempt; 0 before any answer
	At                 time.Time
}

// recentDeliveries lists a tenant's latest webhook deliveries, newest first;
// ctx acts in tenantID with the viewer's role.
func recentDeliveries(ctx context.Context, a *app.App, _ string) ([]DeliveryRow, error) {
	ds, err := a.RecentDeliveries(ctx, recentDeliveryCount)
	if err != nil {
		return nil, err
	}
	rows := make([]DeliveryRow, len(ds))
	for i, d := range ds {
		rows[i] = DeliveryRow{Event: d.EventType, URL: d.Edges.Endpoint.URL, Status: string(d.Status),
			Attempts: d.Attempts, LastStatus: deref(d.LastStatusCode), At: d.CreatedAt}
	}
	return rows, nil
}

// recentDeliveryCount is how many deliveries a tenant's page lists.
const recentDeliveryCount = 20

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed assets/*.css assets/*.js
var assetFiles embed.FS

// assets are the files under assets/, served under Base+"/assets".
var assets = webassets.Load(assetFiles, "assets")

var funcs = template.FuncMap{
	// asset returns the versioned URL of a file under assets/.
	"asset": func(name string) (string, error) {
		return assets.URL(Base+"/assets", name)
	},
	// when shows an instant to people, in UTC; datetime is its machine form.
	"when":     func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
	"datetime": func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	// n writes a chart coordinate; count, a whole number for people.
	"n":     chart.Num,
	"count": func(n int) string { return count(float64(n)) },
	"join":  func(list []string) string { return strings.Join(list, ", ") },
	"kindName": func(k apiclient.Kind) string {
		if k == apiclient.KindPos {
			return "POS"
		}
		return "OAuth"
	},
}

// pages maps a page's name to its template: the layout with the page's
// "title" and "content".
var pages = func() map[string]*template.Template {
	layout := template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFiles, "templates/layout.html"))
	m := map[string]*template.Template{}
	for _, name := range []string{"signin", "sso", "home", "sandbox", "secret", "error", "settings", "insights", "audit"} {
		m[name] = template.Must(template.Must(layout.Clone()).ParseFS(templateFiles, "templates/"+name+".html"))
	}
	return m
}()

// flashes are the messages a redirect after a change may ask for with
// ?done=…: fixed texts, so a link cannot make the panel say anything else.
var flashes = map[string]string{
	"signed-out":      "You signed out.",
	"sandbox-created": "The sandbox is ready, with the demo data loaded.",
	"sandbox-reset":   "The sandbox was reset: its data is the demo data again, and its credentials still work.",
	"settings-saved":  "The settings were saved; they apply from the next computation.",
}

// page is the data of every template; each page uses its own fields.
type page struct {
	Title  string
	Viewer *viewer.Viewer // nil when nobody is signed in
	Flash  string         // a change went through
	Error  string         // a change was refused, or the page failed

	// The sign-in page.
	CanSSO bool
	Next   string // the panel path to return to after signing in

	// The home page and the sandbox page.
	Production       *ent.Tenant
	Sandboxes        []*ent.Tenant
	Sandbox          *ent.Tenant
	Clients          []*ent.APIClient
	Deliveries       []DeliveryRow
	DeliveriesFailed bool

	// The programme settings page.
	Settings []settingField

	// The insights page.
	Insights *insights

	// The audit trail page.
	Audit []*ent.AuditEvent

	// The page showing a secret once.
	Credentials *app.ClientCredentials
	Rotated     bool
	Issuer      string // the service's public URL
}

// CanChange says whether the signed-in user may change things.
func (p page) CanChange() bool { return p.Viewer != nil && p.Viewer.Role == viewer.RoleAdmin }

// Role names the signed-in user's role for people.
func (p page) Role() string {
	if p.Viewer == nil {
		return ""
	}
	return string(p.Viewer.Role)
}

type panel struct {
	app *app.App
	gql http.Handler // the service's GraphQL, which the insights page asks
	log *slog.Logger
}

// Handler serves the panel; mount it at Base. gql is the service's GraphQL
// handler, which expects the viewer in the request's context.
func Handler(a *app.App, gql http.Handler, log *slog.Logger) http.Handler {
	p := &panel{app: a, gql: gql, log: log}
	r := chi.NewRouter()
	r.Use(middleware.GetHead, securityHeaders.Middleware, p.sameOrigin)
	r.Get("/assets/*", serveAsset)
	r.Get("/sso", p.ssoPage)
	r.Get("/sign-in", p.signInByLink)
	r.Post("/session", p.signIn)
	r.Post("/logout", p.signOut)
	r.Group(func(r chi.Router) {
		r.Use(p.session)
		r.Get("/", p.home)
		r.Post("/sandboxes", p.createSandbox)
		r.Get("/sandboxes/{id}", p.sandbox)
		r.Post("/sandboxes/{id}/clients", p.createClient)
		r.Post("/sandboxes/{id}/clients/{clientID}/rotate", p.rotateClient)
		r.Post("/sandboxes/{id}/reset", p.resetSandbox)
		r.Get("/insights", p.insights)
		r.Get("/sandboxes/{id}/insights", p.sandboxInsights)
		r.Get("/settings", p.settings)
		r.Get("/audit", p.audit)
		r.Post("/settings", p.saveSettings)
	})
	return r
}

// securityHeaders are the panel's: framing denied, and Referrer-Policy
// same-origin, not no-referrer: under that browsers send "Origin: null" with
// every form, and sameOrigin could not tell our forms from others.
var securityHeaders = secheaders.Policy{CSP: csp, Referrer: "same-origin", DenyFraming: true}

// sameOrigin refuses a change whose Origin header, or Referer when there is
// no Origin, is not this host: another site's form, besides SameSite=Strict
// keeping the session cookie from it.
func (p *panel) sameOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			next.ServeHTTP(w, r)
			return
		}
		source := r.Header.Get("Origin")
		if source == "" {
			source = r.Header.Get("Referer")
		}
		u, err := url.Parse(source)
		if source == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || !strings.EqualFold(u.Host, r.Host) {
			p.render(w, r, http.StatusForbidden, "error", page{Title: "Refused",
				Error: "This form did not come from the panel's own pages. Open the panel again and retry."})
			return
		}
		next.ServeHTTP(w, r)
	})
}

func serveAsset(w http.ResponseWriter, r *http.Request) {
	assets.Serve(w, r, chi.URLParam(r, "*"))
}

// render writes a page; pages are never cached, for they may hold a secret
// or what only the signed-in user may see.
func (p *panel) render(w http.ResponseWriter, r *http.Request, status int, name string, data page) {
	if v, ok := viewer.FromContext(r.Context()); ok && data.Viewer == nil {
		data.Viewer = &v
	}
	var b bytes.Buffer
	if err := pages[name].ExecuteTemplate(&b, "layout.html", data); err != nil {
		p.log.ErrorContext(r.Context(), "panel: rendering a page", "page", name, "error", err)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(b.Bytes())
}

// fail shows an operation's error: its message and status for an
// *apperr.Error, a generic page (and a log line) for anything else.
func (p *panel) fail(w http.ResponseWriter, r *http.Request, err error) {
	status, msg := p.explain(r, err)
	p.render(w, r, status, "error", page{Title: http.StatusText(status), Error: msg})
}

// explain returns the status and the message to show for err.
func (p *panel) explain(r *http.Request, err error) (int, string) {
	e, ok := httperr.As(err)
	if ok && e.Cause != nil {
		p.log.ErrorContext(r.Context(), "panel: operation failed", "path", r.URL.Path, "code", e.Code, "error", e.Cause)
	}
	if !ok {
		p.log.ErrorContext(r.Context(), "panel: operation failed", "path", r.URL.Path, "error", err)
		return http.StatusInternalServerError, "Something went wrong on our side; it was logged. Try again later."
	}
	status := httperr.Status(e.Kind)
	if v, _ := viewer.FromContext(r.Context()); e.Kind == apperr.KindForbidden && v.ReadOnly() {
		return status, "You are signed in as an analyst, who may look but not change anything: ask an admin of your tenant."
	}
	msg := e.Message
	if msg != "" {
		msg = strings.ToUpper(msg[:1]) + msg[1:]
		if !strings.HasSuffix(msg, ".") {
			msg += "."
		}
	}
	return status, msg
}

// parseForm reads a POST's form, bounded; it answers 400 itself when it
// cannot.
func (p *panel) parseForm(w http.ResponseWriter, r *http.Request) bool {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		p.render(w, r, http.StatusBadRequest, "error", page{Title: "Bad request", Error: "The form could not be read."})
		return false
	}
	return true
}

// formName returns a name field, trimmed, or a message when it is too long.
func formName(r *http.Request) (string, string) {
	name := strings.TrimSpace(r.PostFormValue("name"))
	if utf8.RuneCountInString(name) > maxNameLength {
		return "", fmt.Sprintf("The name is longer than %d characters.", maxNameLength)
	}
	return name, ""
}

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

// --- The tenants ------------------------------------------------------------

func (p *panel) home(w http.ResponseWriter, r *http.Request) {
	p.renderHome(w, r, http.StatusOK, "")
}

// renderHome shows the tenants, with msg when a change was refused.
// auditPageSize is how many of the latest audit events the page shows.
const auditPageSize = 100

// audit shows the latest audit events of the viewer's tenant
// (administrators only).
func (p *panel) audit(w http.ResponseWriter, r *http.Request) {
	events, err := p.app.RecentAuditEvents(r.Context(), auditPageSize)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	p.render(w, r, http.StatusOK, "audit", page{Title: "Audit trail", Audit: events})
}

func (p *panel) renderHome(w http.ResponseWriter, r *http.Request, status int, msg string) {
	tenants, err := p.app.ManagedTenants(r.Context())
	if err != nil {
		p.fail(w, r, err)
		return
	}
	data := page{Title: "Your tenants", Error: msg, Production: tenants[0], Sandboxes: tenants[1:]}
	if msg == "" {
		data.Flash = flashes[r.URL.Query().Get("done")]
	}
	data.Deliveries, data.DeliveriesFailed = p.deliveries(r.Context(), tenants[0].ID)
	p.render(w, r, status, "home", data)
}

func (p *panel) deliveries(ctx context.Context, tenantID string) ([]DeliveryRow, bool) {
	rows, err := recentDeliveries(ctx, p.app, tenantID)
	if err != nil {
		p.log.ErrorContext(ctx, "panel: listing webhook deliveries", "tenant", tenantID, "error", err)
		return nil, true
	}
	return rows, false
}

func (p *panel) createSandbox(w http.ResponseWriter, r *http.Request) {
	if !p.parseForm(w, r) {
		return
	}
	name, msg := formName(r)
	if msg != "" {
		p.renderHome(w, r, http.StatusUnprocessableEntity, msg)
		return
	}
	sb, err := p.app.CreateSandbox(r.Context(), name)
	if _, ok := httperr.As(err); ok {
		status, msg := p.explain(r, err)
		p.renderHome(w, r, status, msg)
		return
	} else if err != nil {
		p.fail(w, r, err)
		return
	}
	http.Redirect(w, r, sandboxPath(sb.ID)+"?done=sandbox-created", http.StatusSeeOther)
}

func sandboxPath(id string) string { return Base + "/sandboxes/" + url.PathEscape(id) }

// --- A sandbox --------------------------------------------------------------

func (p *panel) sandbox(w http.ResponseWriter, r *http.Request) {
	p.renderSandbox(w, r, http.StatusOK, "")
}

// renderSandbox shows the sandbox of the path, with msg when a change was
// refused. A sandbox of another tenant, or no sandbox, is not found.
func (p *panel) renderSandbox(w http.ResponseWriter, r *http.Request, status int, msg string) {
	ctx := r.Context()
	id := chi.URLParam(r, "id")
	tenants, err := p.app.ManagedTenants(ctx)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	data := page{Error: msg, Production: tenants[0]}
	for _, t := range tenants[1:] {
		if t.ID == id {
			data.Sandbox = t
		}
	}
	if data.Sandbox == nil {
		p.fail(w, r, apperr.NotFound("sandbox"))
		return
	}
	data.Title = "Sandbox: " + data.Sandbox.Name
	if msg == "" {
		data.Flash = flashes[r.URL.Query().Get("done")]
	}
	if data.Clients, err = p.app.SandboxClients(ctx, id); err != nil {
		p.fail(w, r, err)
		return
	}
	sbCtx, err := p.app.InSandbox(ctx, id)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	data.Deliveries, data.DeliveriesFailed = p.deliveries(sbCtx, id)
	p.render(w, r, status, "sandbox", data)
}

// refuse shows the sandbox page again with the reason err was refused.
func (p *panel) refuse(w http.ResponseWriter, r *http.Request, err error) {
	if _, ok := httperr.As(err); !ok {
		p.fail(w, r, err)
		return
	}
	status, msg := p.explain(r, err)
	p.renderSandbox(w, r, status, msg)
}

func (p *panel) createClient(w http.ResponseWriter, r *http.Request) {
	if !p.parseForm(w, r) {
		return
	}
	kind := apiclient.Kind(r.PostFormValue("kind"))
	if kind != apiclient.KindOauth && kind != apiclient.KindPos {
		p.renderSandbox(w, r, http.StatusUnprocessableEntity, "Choose OAuth or POS credentials.")
		return
	}
	name, msg := formName(r)
	if msg != "" {
		p.renderSandbox(w, r, http.StatusUnprocessableEntity, msg)
		return
	}
	cred, err := p.app.CreateSandboxClient(r.Context(), chi.URLParam(r, "id"), kind, name)
	if err != nil {
		p.refuse(w, r, err)
		return
	}
	p.showSecret(w, r, http.StatusCreated, cred, false)
}

func (p *panel) rotateClient(w http.ResponseWriter, r *http.Request) {
	cred, err := p.app.RotateSandboxClient(r.Context(), chi.URLParam(r, "id"), chi.URLParam(r, "clientID"))
	if err != nil {
		p.refuse(w, r, err)
		return
	}
	p.showSecret(w, r, http.StatusOK, cred, true)
}

// showSecret answers a creation or a rotation with the one page that shows
// the secret: it is not stored, and no other page has it.
func (p *panel) showSecret(w http.ResponseWriter, r *http.Request, status int, cred *app.ClientCredentials, rotated bool) {
	title := "New credentials"
	if rotated {
		title = "New secret"
	}
	p.render(w, r, status, "secret", page{Title: title, Credentials: cred, Rotated: rotated,
		Issuer: strings.TrimRight(p.app.Auth.Issuer, "/")})
}

func (p *panel) resetSandbox(w http.ResponseWriter, r *http.Request) {
	if !p.parseForm(w, r) {
		return
	}
	if r.PostFormValue("confirm") != "yes" {
		p.renderSandbox(w, r, http.StatusUnprocessableEntity, "Tick the box to confirm the reset: it replaces the sandbox's data.")
		return
	}
	id := chi.URLParam(r, "id")
	if err := p.app.ResetSandbox(r.Context(), id); err != nil {
		p.refuse(w, r, err)
		return
	}
	http.Redirect(w, r, sandboxPath(id)+"?done=sandbox-reset", http.StatusSeeOther)
}
