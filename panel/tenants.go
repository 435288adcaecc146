package panel

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/httperr"
)

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
	ds, err := a.Webhooks.RecentDeliveries(ctx, recentDeliveryCount)
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

// --- The tenants ------------------------------------------------------------

func (p *panel) home(w http.ResponseWriter, r *http.Request) {
	p.renderHome(w, r, http.StatusOK, "")
}

// auditPageSize is how many of the latest audit events the page shows.
const auditPageSize = 100

// audit shows the latest audit events of the viewer's tenant
// (administrators only).
func (p *panel) audit(w http.ResponseWriter, r *http.Request) {
	events, err := p.app.Backoffice.RecentAuditEvents(r.Context(), auditPageSize)
	if err != nil {
		p.fail(w, r, err)
		return
	}
	p.render(w, r, http.StatusOK, "audit", page{Title: "Audit trail", Audit: events})
}

// renderHome shows the tenants, with msg when a change was refused.
func (p *panel) renderHome(w http.ResponseWriter, r *http.Request, status int, msg string) {
	tenants, err := p.app.Backoffice.ManagedTenants(r.Context())
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
	sb, err := p.app.Backoffice.CreateSandbox(r.Context(), name)
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
