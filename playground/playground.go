// Package playground serves GraphiQL, the GraphQL editor, for analysts and
// back-office developers. Everything the page loads is embedded in the
// binary, so it works offline and under a strict Content-Security-Policy.
package playground

import (
	"bytes"
	"embed"
	"html/template"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/fideliza/fideliza/secheaders"
	"github.com/fideliza/fideliza/webassets"
)

// Config says where the page's links lead.
type Config struct {
	// GraphQLPath is the URL path of the GraphQL endpoint the editor queries.
	GraphQLPath string
	// LoginURL, when set, is the target of "Sign in with SSO"; the SSO
	// callback returns to the page with #access_token=… in the fragment.
	LoginURL string
}

// csp allows only our own origin. GraphiQL 3 needs two relaxations, both
// checked by the browser test: inline styles (its dialogs add <style>
// elements) and data: URLs (the fonts and images embedded in its CSS).
// base-uri and form-action, which default-src does not cover, are closed.
const csp = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

//go:embed index.html
var indexHTML string

// The patterns leave fetch.sh and vendor/VERSIONS out: only what the page loads is served.
//
//go:embed assets/*.js assets/*.css assets/vendor/*.js assets/vendor/*.css
var embedded embed.FS

var pageTemplate = template.Must(template.New("index.html").Parse(indexHTML))

// assets are the files under assets/.
var assets = webassets.Load(embedded, "assets")

// Handler serves the page at its root and the files under assets/. Mount it
// with chi's Mount, which keeps the full path in the request's URL: the page
// derives its assets' URLs from it.
func Handler(cfg Config) http.Handler {
	r := chi.NewRouter()
	// The JavaScript is 3.5 MB as published (GraphiQL's .min.js is not
	// minified) and about a fifth of that compressed.
	r.Use(middleware.GetHead, secheaders.Policy{CSP: csp}.Middleware, middleware.Compress(5))
	r.Get("/", func(w http.ResponseWriter, r *http.Request) {
		var b bytes.Buffer
		data := page{Config: cfg, base: strings.TrimSuffix(r.URL.Path, "/")}
		if err := pageTemplate.Execute(&b, data); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Write(b.Bytes())
	})
	r.Get("/assets/*", func(w http.ResponseWriter, r *http.Request) { assets.Serve(w, r, chi.URLParam(r, "*")) })
	return r
}

// page is the data of index.html.
type page struct {
	Config
	base string // the page's path without a trailing slash
}

// Examples is the JSON of the tabs the page opens with (Examples).
func (p page) Examples() (string, error) { return examplesJSON() }

// Asset returns the versioned URL of the named file under assets/.
func (p page) Asset(name string) (string, error) {
	return assets.URL(p.base+"/assets", name)
}
