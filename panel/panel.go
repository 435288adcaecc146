// Package panel serves the developer panel: server-rendered pages where a
// back-office user signs in, sees the tenants they manage, creates sandboxes
// and their credentials, and resets them. Every file the pages load is
// embedded in the binary, so the panel works offline and under a strict
// Content-Security-Policy; the only script is the SSO page's.
package panel

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/httperr"
	"github.com/fideliza/fideliza/panel/chart"
	"github.com/fideliza/fideliza/secheaders"
	"github.com/fideliza/fideliza/viewer"
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
	for _, name := range []string{"signin", "sso", "home", "sandbox", "secret", "error", "settings", "insights", "audit", "segments", "segment"} {
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
	"segment-saved":   "The segment was saved; an audience's members are those its rule selects now.",
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

	// The segments pages: the list, and a segment's form.
	Segments     []*ent.Segment
	NextSegments string // the cursor of the list's next page
	SegmentForm  *segmentForm

	// The page showing a secret once.
	Credentials *backoffice.ClientCredentials
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
	log *slog.Logger
}

// Handler serves the panel; mount it at Base.
func Handler(a *app.App, log *slog.Logger) http.Handler {
	p := &panel{app: a, log: log}
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
		r.Get("/segments", p.segments)
		r.Get("/segments/new", p.newSegment)
		r.Post("/segments", p.saveSegment)
		r.Get("/segments/{id}", p.segment)
		r.Post("/segments/{id}", p.saveSegment)
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
