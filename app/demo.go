package app

import (
	"context"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/ent/campaign"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/ent/store"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/viewer"
)

// Demo data: fixed ids so the README's example calls stay valid.
const (
	DemoTenantID     = "de000000-0000-4000-8000-000000000001"
	DemoOAuthClient  = "cli_demo_oauth"
	DemoPOSClient    = "cli_demo_pos"
	demoSegmentName  = "VIP"
	demoTenantName   = "Fideliza Demo"
	demoCampaignDays = 90
)

// DemoCredentials are the demo tenant and freshly issued secrets of its clients.
type DemoCredentials struct {
	TenantID               string
	OAuthClientID          string
	OAuthSecret            string
	POSClientID, POSSecret string
	StoreCodes             []string
}

// DemoStore is a store of the demo.
type DemoStore struct{ Code, Name, City, State string }

// DemoStores are the demo's stores, four in each of three regions (states,
// their store group): the seed opens the first two, the living demo's
// history (package demoyear) the others.
var DemoStores = []DemoStore{
	{"LOJA-01", "Loja Centro", "São Paulo", "SP"}, {"LOJA-02", "Loja Shopping", "São Paulo", "SP"},
	{"LOJA-03", "Loja Paulista", "São Paulo", "SP"}, {"LOJA-04", "Loja Campinas", "Campinas", "SP"},
	{"LOJA-05", "Loja Copacabana", "Rio de Janeiro", "RJ"}, {"LOJA-06", "Loja Barra", "Rio de Janeiro", "RJ"},
	{"LOJA-07", "Loja Niterói", "Niterói", "RJ"}, {"LOJA-08", "Loja Tijuca", "Rio de Janeiro", "RJ"},
	{"LOJA-09", "Loja Savassi", "Belo Horizonte", "MG"}, {"LOJA-10", "Loja Pampulha", "Belo Horizonte", "MG"},
	{"LOJA-11", "Loja Contagem", "Contagem", "MG"}, {"LOJA-12", "Loja Uberlândia", "Uberlândia", "MG"},
}

var demoCustomers = []struct{ name, email, cpf, phone, birth string }{
	{"Ana Souza", "ana.souza@example.com", "52998224725", "+5511987654321", "1990-04-12"},
	{"Bruno Lima", "bruno.lima@example.com", "11144477735", "+5521998765432", "1985-11-30"},
	{"Carla Mendes", "carla.mendes@example.com", "39053344705", "+5531987651234", ""},
	{"Diego Alves", "diego.alves@example.com", "86288366757", "", ""},
}

// LoadDemo creates the demo tenant with stores, customers, a segment and
// campaigns when they are missing, and gives its two clients new secrets (the
// old ones cannot be shown again). Running it twice changes only the secrets.
func (a *App) LoadDemo(ctx context.Context) (*DemoCredentials, error) {
	ctx = viewer.SystemContext(ctx)
	creds := &DemoCredentials{TenantID: DemoTenantID, OAuthClientID: DemoOAuthClient, POSClientID: DemoPOSClient}
	created := false
	err := a.DB.InTx(ctx, func(tx storage.Tx) error {
		if _, err := tx.Ent.Tenant.Get(ctx, DemoTenantID); ent.IsNotFound(err) {
			if err := a.seedDemo(ctx, tx.Ent); err != nil {
				return err
			}
			created = true
		} else if err != nil {
			return err
		}
		var secretErr error
		creds.OAuthSecret, secretErr = demoSecret(ctx, tx.Ent, DemoOAuthClient, apiclient.KindOauth)
		if secretErr != nil {
			return secretErr
		}
		creds.POSSecret, secretErr = demoSecret(ctx, tx.Ent, DemoPOSClient, apiclient.KindPos)
		return secretErr
	})
	if err != nil {
		return nil, err
	}
	if created && a.History != nil {
		a.Logger().Info("generating the demo's year of history (a minute or two on 2 cores, see the README)", "tenant", DemoTenantID)
		started := time.Now()
		if err := a.playHistory(ctx, DemoTenantID, true); err != nil {
			return nil, fmt.Errorf("the demo's year of history: %w", err)
		}
		a.Logger().Info("demo history generated", "tenant", DemoTenantID, "seconds", time.Since(started).Seconds())
	}
	demo := viewer.TenantContext(ctx, DemoTenantID)
	if creds.StoreCodes, err = a.DB.Ent.Store.Query().Order(store.ByCode()).Select(store.FieldCode).Strings(demo); err != nil {
		return nil, err
	}
	return creds, nil
}

// demoSecret creates the demo client id or rotates its secret.
func demoSecret(ctx context.Context, c *ent.Client, id string, kind apiclient.Kind) (string, error) {
	if _, err := c.APIClient.Get(ctx, id); err == nil {
		cred, err := backoffice.RotateClientIn(ctx, c, id)
		if err != nil {
			return "", err
		}
		return cred.Secret, nil
	} else if !ent.IsNotFound(err) {
		return "", err
	}
	name := "Demo POS"
	if kind == apiclient.KindOauth {
		name = "Demo integration"
	}
	cred, err := backoffice.CreateClientIn(ctx, c, DemoTenantID, id, kind, name, nil)
	if err != nil {
		return "", err
	}
	return cred.Secret, nil
}

// HistoryFunc gives a tenant holding the demo's seed a history ending at
// end, played through the operations (package demoyear's Play): with full
// a year (serve --demo's tenant), else a few months (a sandbox's).
type HistoryFunc func(ctx context.Context, a *App, tenantID string, end time.Time, full bool) error

// playHistory plays a.History into a tenant, ending now, as the system.
func (a *App) playHistory(ctx context.Context, tenantID string, full bool) error {
	if a.History == nil {
		return nil
	}
	return a.History(viewer.SystemContext(ctx), a, tenantID, a.Now(), full)
}

// Replayer returns an application on a's database that plays history on
// clock: the sales it registers are processed by its caller (no job is
// queued for them), and it counts nothing.
func (a *App) Replayer(clock func() time.Time) *App {
	return New(&Config{DB: a.DB, Log: a.Log, River: a.River, WebhookGuard: a.WebhookGuard, InlineSales: true, Clock: clock})
}

func (a *App) seedDemo(ctx context.Context, c *ent.Client) error {
	t, err := c.Tenant.Create().SetID(DemoTenantID).SetName(demoTenantName).SetPreRegistration(true).Save(ctx)
	if err != nil {
		return err
	}
	return a.seedDemoData(ctx, c, t.ID)
}

// seedDemoData gives a tenant the demo's stores, customers, segment and
// campaigns: the demo tenant, and every new or reset sandbox.
func (a *App) seedDemoData(ctx context.Context, c *ent.Client, tenantID string) error {
	for _, s := range DemoStores[:2] {
		err := c.Store.Create().SetTenantID(tenantID).SetCode(s.Code).SetName(s.Name).SetGroups([]string{s.State}).Exec(ctx)
		if err != nil {
			return err
		}
	}
	vip, err := c.Segment.Create().SetTenantID(tenantID).SetName(demoSegmentName).
		SetDescription("Best customers of the demo").Save(ctx)
	if err != nil {
		return err
	}
	for i, dc := range demoCustomers {
		cc := c.Customer.Create().SetTenantID(tenantID).SetName(dc.name).SetEmail(dc.email).
			SetDocumentType(customer.DocumentTypeCPF).SetDocument(dc.cpf).
			SetConsentMarketingEmail(true).SetConsentUpdatedAt(a.Stamp())
		if dc.phone != "" {
			cc.SetPhone(dc.phone)
		}
		if dc.birth != "" {
			cc.SetBirthDate(dc.birth)
		}
		if i < 2 {
			cc.AddSegmentIDs(vip.ID)
		}
		if err := cc.Exec(ctx); err != nil {
			return err
		}
	}
	now := time.Now().UTC().Truncate(time.Second)
	end := now.AddDate(0, 0, demoCampaignDays)
	campaigns := []*ent.CampaignCreate{
		c.Campaign.Create().SetName("10% off in every channel").SetType(campaign.TypeDiscount).
			SetStatus(campaign.StatusActive).SetStartsAt(now).SetEndsAt(end).
			SetDiscountMode(campaign.DiscountModePercentage).SetDiscountValue(decimal.NewFromInt(10)).
			SetLimitPerCustomer(1).SetLimitTotal(1000),
		c.Campaign.Create().SetName("Double points for VIPs").SetType(campaign.TypeBonusPoints).
			SetStatus(campaign.StatusActive).SetStartsAt(now).SetEndsAt(end).
			SetSegmentID(vip.ID).SetMultiplier(decimal.NewFromInt(2)),
		c.Campaign.Create().SetName("5% cashback next month").SetType(campaign.TypeCashback).
			SetStatus(campaign.StatusScheduled).SetStartsAt(now.AddDate(0, 1, 0)).SetEndsAt(end).
			SetChannels([]string{"ecommerce", "app"}).
			SetDiscountMode(campaign.DiscountModePercentage).SetDiscountValue(decimal.NewFromInt(5)).
			SetCreditAfterDays(7).SetMinSubtotal(decimal.NewFromInt(100)),
	}
	for _, cc := range campaigns {
		if err := cc.SetTenantID(tenantID).Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}

// demoData gives the back office's sandboxes the demo's data and history.
type demoData struct{ a *App }

func (d demoData) Seed(ctx context.Context, c *ent.Client, tenantID string) error {
	return d.a.seedDemoData(ctx, c, tenantID)
}

func (d demoData) PlayHistory(ctx context.Context, tenantID string) error {
	return d.a.playHistory(ctx, tenantID, false)
}
