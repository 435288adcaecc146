package rest

import (
	"html/template"
	"net/http"
	"net/url"
)

// startSignIn sends a back-office user to the external provider; return_to
// is the page of this service to come back to (the playground, the panel).
func (s *server) startSignIn(w http.ResponseWriter, r *http.Request) {
	s.app.Auth.StartSignIn(w, r, r.URL.Query().Get("return_to"))
}

// finishSignIn receives the provider's redirect and hands the verified token
// to the page in the URL fragment, which browsers never send to servers.
func (s *server) finishSignIn(w http.ResponseWriter, r *http.Request) {
	token, returnTo, err := s.app.Auth.FinishSignIn(w, r)
	if err != nil {
		s.log.WarnContext(r.Context(), "sign-in failed", "error", err)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusBadRequest)
		_ = signInFailed.Execute(w, err.Error())
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, returnTo+"#access_token="+url.QueryEscape(token), http.StatusFound)
}

var signInFailed = template.Must(template.New("").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign-in failed · Fideliza</title></head>
<body><main><h1>Sign-in failed</h1><p>{{.}}</p><p>Start again from <a href="/panel/">the developer panel</a> or <a href="/playground">the playground</a>.</p></main></body></html>
`))
