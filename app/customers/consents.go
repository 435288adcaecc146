package customers

import (
	"context"
	"slices"
	"time"

	"github.com/fideliza/fideliza/domain/opt"
	"github.com/fideliza/fideliza/domain/outbox"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/consentchange"
	"github.com/fideliza/fideliza/viewer"
)

// ConsentPurposes are the purposes a customer Consents to, in the order of
// a Consents value.
var ConsentPurposes = []consentchange.Purpose{
	consentchange.PurposeMarketingEmail, consentchange.PurposeMarketingSms,
	consentchange.PurposeMarketingWhatsapp, consentchange.PurposeDataSharing,
}

// Consents are a customer's Consents, one per purpose of ConsentPurposes.
type Consents [4]bool

func ConsentsOf(c *ent.Customer) Consents {
	return Consents{c.ConsentMarketingEmail, c.ConsentMarketingSms, c.ConsentMarketingWhatsapp, c.ConsentDataSharing}
}

// fields are the input's field of each purpose.
func (in *ConsentInput) fields() [4]*opt.Field[bool] {
	return [4]*opt.Field[bool]{&in.MarketingEmail, &in.MarketingSMS, &in.MarketingWhatsApp, &in.DataSharing}
}

// applied is old after a write of in: the purposes it sets change, a null
// consent withdraws every one, an absent one changes none.
func (old Consents) applied(in opt.Field[ConsentInput]) Consents {
	switch {
	case in.Null:
		return Consents{}
	case !in.Set:
		return old
	}
	out := old
	for i, f := range in.Value.fields() {
		if f.Set {
			out[i] = f.Value
		}
	}
	return out
}

// consentChannel says through what a viewer changes Consents: the API (a
// client), an import (the system: the import job, or the operator's CLI), or
// the back office (a user).
func consentChannel(v viewer.Viewer) consentchange.Channel {
	switch {
	case v.Role == viewer.RoleClient:
		return consentchange.ChannelAPI
	case v.IsService():
		return consentchange.ChannelImport
	}
	return consentchange.ChannelBackOffice
}

func viewerOf(ctx context.Context) viewer.Viewer {
	v, _ := viewer.FromContext(ctx)
	return v
}

// consentRecords are the history rows and customer.consent_changed events
// of what changed from old to now (every purpose given a value, for a new
// customer: old nil), for a bulk insert through c.
func consentRecords(ctx context.Context, c *ent.Client, cust *ent.Customer, old *Consents, now Consents, given Consents,
	channel consentchange.Channel, at time.Time) ([]*ent.ConsentChangeCreate, []*ent.EventCreate) {
	v := viewerOf(ctx)
	var changes []*ent.ConsentChangeCreate
	var events []*ent.EventCreate
	for i, purpose := range ConsentPurposes {
		if old != nil && old[i] == now[i] || old == nil && !given[i] {
			continue
		}
		changes = append(changes, c.ConsentChange.Create().SetTenantID(cust.TenantID).SetCustomerID(cust.ID).
			SetPurpose(purpose).SetGranted(now[i]).SetChannel(channel).SetSource(v.Subject).SetCreatedAt(at))
		events = append(events, outbox.New(c, at, cust.TenantID, outbox.CustomerConsentChanged, cust.ID, map[string]any{
			"customer_id": cust.ID, "purpose": string(purpose), "granted": now[i], "channel": string(channel),
			"source": v.Subject, "changed_at": at,
		}))
	}
	return changes, events
}

// RecordConsents writes the history and events of what changed from old to
// now (see consentRecords) in the transaction of c.
func RecordConsents(ctx context.Context, c *ent.Client, cust *ent.Customer, old *Consents, now Consents, given Consents,
	channel consentchange.Channel, at time.Time) error {
	changes, events := consentRecords(ctx, c, cust, old, now, given, channel, at)
	return writeConsentRecords(ctx, c, changes, events)
}

// writeConsentRecords inserts history rows and events, a bounded number a
// statement (SQLite's limit on a statement's variables).
func writeConsentRecords(ctx context.Context, c *ent.Client, changes []*ent.ConsentChangeCreate, events []*ent.EventCreate) error {
	for chunk := range slices.Chunk(changes, 1000) {
		if err := c.ConsentChange.CreateBulk(chunk...).Exec(ctx); err != nil {
			return err
		}
	}
	for chunk := range slices.Chunk(events, 1000) {
		if err := c.Event.CreateBulk(chunk...).Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}
