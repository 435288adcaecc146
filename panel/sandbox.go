package panel

import (
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/httperr"
)

// --- A sandbox --------------------------------------------------------------

func (p *panel) sandbox(w http.ResponseWriter, r *http.Request) {
	p.renderSandbox(w, r, http.StatusOK, "")
}

// renderSandbox shows the sandbox of the path, with msg when a change was
// refused. A sandbox of another tenant, or no sandbox, is not found.
func (p *panel) renderSandbox(w http.ResponseWriter, r *http.Request, status int, msg string) {
	ctx := r.Context()
	id := chi.URLParam(r, "id")
	tenants, err := p.app.Backoffice.ManagedTenants(ctx)
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
	if data.Clients, err = p.app.Backoffice.SandboxClients(ctx, id); err != nil {
		p.fail(w, r, err)
		return
	}
	sbCtx, err := p.app.Backoffice.InSandbox(ctx, id)
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
	cred, err := p.app.Backoffice.CreateSandboxClient(r.Context(), chi.URLParam(r, "id"), kind, name)
	if err != nil {
		p.refuse(w, r, err)
		return
	}
	p.showSecret(w, r, http.StatusCreated, cred, false)
}

func (p *panel) rotateClient(w http.ResponseWriter, r *http.Request) {
	cred, err := p.app.Backoffice.RotateSandboxClient(r.Context(), chi.URLParam(r, "id"), chi.URLParam(r, "clientID"))
	if err != nil {
		p.refuse(w, r, err)
		return
	}
	p.showSecret(w, r, http.StatusOK, cred, true)
}

// showSecret answers a creation or a rotation with the one page that shows
// the secret: it is not stored, and no other page has it.
func (p *panel) showSecret(w http.ResponseWriter, r *http.Request, status int, cred *backoffice.ClientCredentials, rotated bool) {
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
	if err := p.app.Backoffice.ResetSandbox(r.Context(), id); err != nil {
		p.refuse(w, r, err)
		return
	}
	http.Redirect(w, r, sandboxPath(id)+"?done=sandbox-reset", http.StatusSeeOther)
}
