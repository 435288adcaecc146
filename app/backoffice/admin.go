package backoffice

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/fideliza/fideliza/app/kernel"
	"github.com/fideliza/fideliza/storage"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/domain/apperr"
	"github.com/fideliza/fideliza/domain/points"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/ent/auditevent"
	"github.com/fideliza/fideliza/ent/change"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/viewer"
)

// maxPendingDays bounds the pending period of earned points.
const maxPendingDays = 90

// MaxPointsSpendMin bounds the fewest points a customer may spend at once.
const MaxPointsSpendMin = 1_000_000

// maxCashbackSpendMin bounds the fewest R$ of cashback spent at once.
const maxCashbackSpendMin = 10_000

// TenantSettings are the settings an operator or admin may change; nil
// leaves a setting as it is.
type TenantSettings struct {
	Name             *string
	Active           *bool
	PreRegistration  *bool
	SaleRegistration *bool
	SaleTolerance    *decimal.Decimal
	PointsPerReal    *decimal.Decimal
	// The programme: months until earned points expire, the points earned
	// in 12 months each level takes, and the POS price code of each level.
	PointsExpiryMonths                               *int
	SilverThreshold, GoldThreshold, DiamondThreshold *int64
	PriceCodeBronze, PriceCodeSilver, PriceCodeGold  *int
	PriceCodeDiamond                                 *int
	// The programme's calendar: its IANA time zone, the days earned points
	// stay pending, the days a level is kept after its points fall short,
	// and the days between fits of the churn model.
	TimeZone          *string
	PointsPendingDays *int
	LevelGraceDays    *int
	ChurnRefitDays    *int
	// CashbackAsPoints: cashback campaigns credit points (true) or R$ to
	// the customer's cashback wallet (false).
	CashbackAsPoints *bool
	// The cashback wallet spent: the channels where it pays (pdv,
	// ecommerce; an empty list turns spending off), the largest share of a
	// sale or order payable with it (0 to 1) and the fewest R$ spent at
	// once.
	CashbackSpendChannels *[]string
	CashbackSpendMaxShare *decimal.Decimal
	CashbackSpendMin      *decimal.Decimal
	// Points spent as money: the R$ value of a point, the fewest points
	// spent at once, the largest share of a sale payable with points (0 to
	// 1), and the channels where it is allowed (pdv, ecommerce; an empty
	// list turns spending off).
	PointsValue         *decimal.Decimal
	PointsSpendMin      *int64
	PointsSpendMaxShare *decimal.Decimal
	// PointsSpendMaxShareLevels gives a level (silver, gold, diamond) its
	// own largest share; a level given nil goes back to the programme's.
	PointsSpendMaxShareLevels map[customer.Level]*decimal.Decimal
	PointsSpendChannels       *[]string
	// AuditRetentionDays is how long the audit trail is kept.
	AuditRetentionDays *int
	// AnonymizeInactiveYears anonymizes customers inactive that long; 0
	// turns it off.
	AnonymizeInactiveYears *int
	// CORSOrigins replaces the origins of the tenant's back-office web
	// apps; an empty list clears them.
	CORSOrigins *[]string
}

// changed lists the settings given, for the record of a change.
func (s TenantSettings) changed() map[string]any {
	out := map[string]any{}
	add := func(name string, isSet bool, v func() any) {
		if isSet {
			out[name] = v()
		}
	}
	add("name", s.Name != nil, func() any { return *s.Name })
	add("active", s.Active != nil, func() any { return *s.Active })
	add("pre_registration", s.PreRegistration != nil, func() any { return *s.PreRegistration })
	add("sale_registration", s.SaleRegistration != nil, func() any { return *s.SaleRegistration })
	add("sale_tolerance", s.SaleTolerance != nil, func() any { return s.SaleTolerance.String() })
	add("points_per_real", s.PointsPerReal != nil, func() any { return s.PointsPerReal.String() })
	add("points_expiry_months", s.PointsExpiryMonths != nil, func() any { return *s.PointsExpiryMonths })
	add("silver_threshold", s.SilverThreshold != nil, func() any { return *s.SilverThreshold })
	add("gold_threshold", s.GoldThreshold != nil, func() any { return *s.GoldThreshold })
	add("diamond_threshold", s.DiamondThreshold != nil, func() any { return *s.DiamondThreshold })
	add("price_code_bronze", s.PriceCodeBronze != nil, func() any { return *s.PriceCodeBronze })
	add("price_code_silver", s.PriceCodeSilver != nil, func() any { return *s.PriceCodeSilver })
	add("price_code_gold", s.PriceCodeGold != nil, func() any { return *s.PriceCodeGold })
	add("price_code_diamond", s.PriceCodeDiamond != nil, func() any { return *s.PriceCodeDiamond })
	add("time_zone", s.TimeZone != nil, func() any { return *s.TimeZone })
	add("points_pending_days", s.PointsPendingDays != nil, func() any { return *s.PointsPendingDays })
	add("level_grace_days", s.LevelGraceDays != nil, func() any { return *s.LevelGraceDays })
	add("cashback_as_points", s.CashbackAsPoints != nil, func() any { return *s.CashbackAsPoints })
	add("cashback_spend_channels", s.CashbackSpendChannels != nil, func() any { return *s.CashbackSpendChannels })
	add("cashback_spend_max_share", s.CashbackSpendMaxShare != nil, func() any { return s.CashbackSpendMaxShare.String() })
	add("cashback_spend_min", s.CashbackSpendMin != nil, func() any { return s.CashbackSpendMin.StringFixed(2) })
	add("points_value", s.PointsValue != nil, func() any { return s.PointsValue.String() })
	add("points_spend_min", s.PointsSpendMin != nil, func() any { return *s.PointsSpendMin })
	add("points_spend_max_share", s.PointsSpendMaxShare != nil, func() any { return s.PointsSpendMaxShare.String() })
	for _, level := range shareLevels {
		share, isSet := s.PointsSpendMaxShareLevels[level]
		add("points_spend_max_share_"+string(level), isSet, func() any {
			if share == nil {
				return nil
			}
			return share.String()
		})
	}
	add("points_spend_channels", s.PointsSpendChannels != nil, func() any { return *s.PointsSpendChannels })
	add("churn_refit_days", s.ChurnRefitDays != nil, func() any { return *s.ChurnRefitDays })
	add("audit_retention_days", s.AuditRetentionDays != nil, func() any { return *s.AuditRetentionDays })
	add("anonymize_inactive_years", s.AnonymizeInactiveYears != nil, func() any { return *s.AnonymizeInactiveYears })
	add("cors_origins", s.CORSOrigins != nil, func() any { return *s.CORSOrigins })
	return out
}

// CreateTenant creates a retailer, or a sandbox of one when sandboxOf is
// set; a sandbox gets the demo data, as one made in the panel does.
func (a *Service) CreateTenant(ctx context.Context, name string, sandboxOf *string) (*ent.Tenant, error) {
	if err := Rules.CreateTenant.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("name", name, "sandbox_of", sandboxOf); err != nil {
		return nil, err
	}
	t, err := a.k.DB.Ent.Tenant.Create().SetName(name).SetNillableSandboxOfID(sandboxOf).Save(ctx)
	if err != nil || sandboxOf == nil {
		return t, err
	}
	return t, a.seedDemoTenant(ctx, t.ID)
}

// UpdateTenant changes the settings of a tenant.
func (a *Service) UpdateTenant(ctx context.Context, id string, s TenantSettings) (*ent.Tenant, error) {
	if err := Rules.UpdateTenant.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("id", id, "", s); err != nil {
		return nil, err
	}
	var p apperr.Problems
	if s.Name != nil && strings.TrimSpace(*s.Name) == "" {
		p.Add("name", "must not be empty")
	}
	if s.SaleTolerance != nil && s.SaleTolerance.IsNegative() {
		p.Add("sale_tolerance", "must not be negative")
	}
	if s.PointsPerReal != nil && s.PointsPerReal.IsNegative() {
		p.Add("points_per_real", "must not be negative")
	}
	if v := s.PointsValue; v != nil && (!v.IsPositive() || v.GreaterThan(decimal.NewFromInt(1000))) {
		p.Add("points_value", "must be more than 0 and at most 1000 (R$ per point)")
	}
	if v := s.PointsSpendMin; v != nil && (*v < 0 || *v > MaxPointsSpendMin) {
		p.Add("points_spend_min", "must be between 0 and %d", MaxPointsSpendMin)
	}
	if v := s.PointsSpendMaxShare; v != nil && (v.IsNegative() || v.GreaterThan(decimal.NewFromInt(1))) {
		p.Add("points_spend_max_share", "must be between 0 and 1")
	}
	for level, v := range s.PointsSpendMaxShareLevels {
		switch {
		case !slices.Contains(shareLevels, level):
			p.Add("points_spend_max_share_levels", "sets the share of silver, gold or diamond, not %q (bronze has the programme's)", level)
		case v != nil && (v.IsNegative() || v.GreaterThan(decimal.NewFromInt(1))):
			p.Add("points_spend_max_share_"+string(level), "must be between 0 and 1")
		}
	}
	for field, ch := range map[string]*[]string{"points_spend_channels": s.PointsSpendChannels,
		"cashback_spend_channels": s.CashbackSpendChannels} {
		if ch == nil {
			continue
		}
		for _, c := range *ch {
			if c != "pdv" && c != "ecommerce" {
				p.Add(field, "must list only pdv and ecommerce, not %q", c)
			}
		}
	}
	if v := s.CashbackSpendMaxShare; v != nil && (v.IsNegative() || v.GreaterThan(decimal.NewFromInt(1))) {
		p.Add("cashback_spend_max_share", "must be between 0 and 1")
	}
	if v := s.CashbackSpendMin; v != nil && (v.IsNegative() || !v.Equal(v.Truncate(2)) || v.GreaterThan(decimal.NewFromInt(maxCashbackSpendMin))) {
		p.Add("cashback_spend_min", "must be between 0 and %d R$, in whole cents", maxCashbackSpendMin)
	}
	if m := s.PointsExpiryMonths; m != nil && (*m < 1 || *m > 120) {
		p.Add("points_expiry_months", "must be between 1 and 120")
	}
	for field, code := range map[string]*int{"price_code_bronze": s.PriceCodeBronze, "price_code_silver": s.PriceCodeSilver,
		"price_code_gold": s.PriceCodeGold, "price_code_diamond": s.PriceCodeDiamond} {
		if code != nil && (*code < 0 || *code > 9999) {
			p.Add(field, "must be between 0 and 9999")
		}
	}
	if s.TimeZone != nil {
		if _, err := points.Zone(*s.TimeZone); err != nil {
			p.Add("time_zone", "must be an IANA time zone such as America/Sao_Paulo")
		}
	}
	for _, b := range []struct {
		field    string
		v        *int
		min, max int
	}{{"points_pending_days", s.PointsPendingDays, 0, maxPendingDays}, {"level_grace_days", s.LevelGraceDays, 0, 365},
		{"churn_refit_days", s.ChurnRefitDays, 1, 90}, {"audit_retention_days", s.AuditRetentionDays, 30, 3650},
		{"anonymize_inactive_years", s.AnonymizeInactiveYears, 0, 20}} {
		if b.v != nil && (*b.v < b.min || *b.v > b.max) {
			p.Add(b.field, "must be between %d and %d", b.min, b.max)
		}
	}
	if err := p.Err(); err != nil {
		return nil, err
	}
	if s.CORSOrigins != nil {
		origins, err := corsOrigins(*s.CORSOrigins)
		if err != nil {
			return nil, err
		}
		s.CORSOrigins = &origins
	}
	if s.SilverThreshold != nil || s.GoldThreshold != nil || s.DiamondThreshold != nil ||
		s.PointsPendingDays != nil || s.PointsExpiryMonths != nil {
		// The settings given with those kept must agree: thresholds rising
		// strictly, points spendable before they expire.
		cur, err := a.k.DB.Ent.Tenant.Get(ctx, id)
		if ent.IsNotFound(err) {
			return nil, apperr.NotFound("tenant")
		}
		if err != nil {
			return nil, err
		}
		silver, gold, diamond := cmp.Or(s.SilverThreshold, &cur.SilverThreshold), cmp.Or(s.GoldThreshold, &cur.GoldThreshold),
			cmp.Or(s.DiamondThreshold, &cur.DiamondThreshold)
		if *silver <= 0 || *silver >= *gold || *gold >= *diamond {
			return nil, apperr.Invalid("silver_threshold", "the level thresholds must rise strictly: 0 < silver (%d) < gold (%d) < diamond (%d)",
				*silver, *gold, *diamond)
		}
		pending, months := cmp.Or(s.PointsPendingDays, &cur.PointsPendingDays), cmp.Or(s.PointsExpiryMonths, &cur.PointsExpiryMonths)
		if *pending >= 28**months {
			return nil, apperr.Invalid("points_pending_days", "the pending period (%d days) must end before points expire (%d months)",
				*pending, *months)
		}
	}
	if s.Name != nil {
		*s.Name = strings.TrimSpace(*s.Name)
	}
	var t *ent.Tenant
	err := a.k.DB.InTx(ctx, func(tx storage.Tx) error {
		var err error
		if t, err = s.update(tx.Ent.Tenant.UpdateOneID(id)).Save(ctx); err != nil {
			return err
		}
		return a.k.Changed(ctx, tx, id, change.PartSettings)
	})
	if err == nil {
		v, _ := viewer.FromContext(ctx)
		a.k.Logger().InfoContext(ctx, "tenant settings changed", "tenant_id", id, "by", v.Subject, "settings", s.changed())
		a.origins.invalidate()
		a.k.Auth.Forget(id, "")
	}
	return t, err
}

// update sets on u the settings s changes.
func (s TenantSettings) update(u *ent.TenantUpdateOne) *ent.TenantUpdateOne {
	u.SetNillableName(s.Name).
		SetNillableActive(s.Active).
		SetNillablePreRegistration(s.PreRegistration).
		SetNillableSaleRegistration(s.SaleRegistration)
	if s.SaleTolerance != nil {
		u.SetSaleTolerance(*s.SaleTolerance)
	}
	if s.PointsPerReal != nil {
		u.SetPointsPerReal(*s.PointsPerReal)
	}
	u.SetNillablePointsExpiryMonths(s.PointsExpiryMonths).
		SetNillableSilverThreshold(s.SilverThreshold).SetNillableGoldThreshold(s.GoldThreshold).
		SetNillableDiamondThreshold(s.DiamondThreshold).
		SetNillablePriceCodeBronze(s.PriceCodeBronze).SetNillablePriceCodeSilver(s.PriceCodeSilver).
		SetNillablePriceCodeGold(s.PriceCodeGold).SetNillablePriceCodeDiamond(s.PriceCodeDiamond).
		SetNillableTimeZone(s.TimeZone).SetNillablePointsPendingDays(s.PointsPendingDays).
		SetNillableLevelGraceDays(s.LevelGraceDays).SetNillableChurnRefitDays(s.ChurnRefitDays).
		SetNillableAuditRetentionDays(s.AuditRetentionDays).SetNillableCashbackAsPoints(s.CashbackAsPoints)
	switch y := s.AnonymizeInactiveYears; {
	case y != nil && *y == 0:
		u.ClearAnonymizeInactiveYears()
	case y != nil:
		u.SetAnonymizeInactiveYears(*y)
	}
	if s.PointsValue != nil {
		u.SetPointsValue(*s.PointsValue)
	}
	u.SetNillablePointsSpendMin(s.PointsSpendMin)
	if s.PointsSpendMaxShare != nil {
		u.SetPointsSpendMaxShare(*s.PointsSpendMaxShare)
	}
	for level, share := range s.PointsSpendMaxShareLevels {
		if set, unset := levelShareSetters(u, level); share != nil {
			set(*share)
		} else {
			unset()
		}
	}
	switch ch := s.PointsSpendChannels; {
	case ch != nil && len(*ch) == 0:
		u.ClearPointsSpendChannels()
	case ch != nil:
		u.SetPointsSpendChannels(slices.Compact(slices.Sorted(slices.Values(*ch))))
	}
	if ch := s.CashbackSpendChannels; ch != nil { // [] is kept (no channel), never null (the default)
		u.SetCashbackSpendChannels(append([]string{}, slices.Compact(slices.Sorted(slices.Values(*ch)))...))
	}
	if s.CashbackSpendMaxShare != nil {
		u.SetCashbackSpendMaxShare(*s.CashbackSpendMaxShare)
	}
	if s.CashbackSpendMin != nil {
		u.SetCashbackSpendMin(*s.CashbackSpendMin)
	}
	switch o := s.CORSOrigins; {
	case o != nil && len(*o) == 0:
		u.ClearCorsOrigins()
	case o != nil:
		u.SetCorsOrigins(*o)
	}
	return u
}

// CreateStore registers a store of a tenant under its external code, in
// groups (regions) campaigns may target.
func (a *Service) CreateStore(ctx context.Context, tenantID, code, name string, groups ...string) (*ent.Store, error) {
	if err := Rules.CreateStore.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("tenant_id", tenantID, "code", code, "name", name, "groups", groups); err != nil {
		return nil, err
	}
	if err := checkStore(&code, &name, groups); err != nil {
		return nil, err
	}
	var s *ent.Store
	err := a.k.DB.InTx(ctx, func(tx storage.Tx) error {
		create := tx.Ent.Store.Create().SetTenantID(tenantID).SetCode(code).SetName(name)
		if len(groups) > 0 {
			create.SetGroups(groups)
		}
		var err error
		if s, err = create.Save(ctx); err != nil || len(groups) == 0 {
			return err
		}
		return a.k.Changed(ctx, tx, tenantID, change.PartStores)
	})
	return s, storeConflict(err)
}

// UpdateStore changes a store's code, name or groups; nil leaves one as it
// is (an empty list of groups clears them).
func (a *Service) UpdateStore(ctx context.Context, id string, code, name *string, groups []string) (*ent.Store, error) {
	if err := Rules.UpdateStore.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("id", id, "code", code, "name", name, "groups", groups); err != nil {
		return nil, err
	}
	if err := checkStore(code, name, groups); err != nil {
		return nil, err
	}
	var s *ent.Store
	err := a.k.DB.InTx(ctx, func(tx storage.Tx) error {
		update := tx.Ent.Store.UpdateOneID(id).SetNillableCode(code).SetNillableName(name)
		switch {
		case groups == nil:
		case len(groups) == 0:
			update.ClearGroups()
		default:
			update.SetGroups(groups)
		}
		var err error
		if s, err = update.Save(ctx); err != nil {
			return err
		}
		return a.k.Changed(ctx, tx, s.TenantID, change.PartStores)
	})
	return s, storeConflict(kernel.NotFoundAs(err, "store"))
}

// maxStoreGroups bounds the groups a store is in.
const maxStoreGroups = 50

// checkStore trims a store's code and name and says whether they and its
// groups are usable.
func checkStore(code, name *string, groups []string) error {
	var p apperr.Problems
	kernel.CheckLabels(&p, "groups", groups, maxStoreGroups)
	for field, v := range map[string]*string{"code": code, "name": name} {
		if v == nil {
			continue
		}
		*v = strings.TrimSpace(*v)
		if *v == "" {
			p.Add(field, "must not be empty")
		}
	}
	if code != nil && len(*code) > 50 {
		p.Add("code", "must be at most 50 characters")
	}
	return p.Err()
}

func storeConflict(err error) error {
	if ent.IsConstraintError(err) {
		return apperr.Conflict("duplicate_store", "code", "a store with this code exists")
	}
	return err
}

// ClientCredentials is a client with its secret, which exists only here:
// the database keeps its hash.
type ClientCredentials struct {
	Client *ent.APIClient
	Secret string
}

// CreateClient creates an OAuth or POS client. OAuth clients get every scope
// unless scopes narrows them; POS clients have none.
func (a *Service) CreateClient(ctx context.Context, tenantID string, kind apiclient.Kind, name string, scopes []string) (*ClientCredentials, error) {
	if err := Rules.CreateClient.Allow(ctx); err != nil {
		return nil, err
	}
	return a.createClient(ctx, tenantID, kind, name, scopes)
}

// createClient is CreateClient without its policy check, for the operations
// of this context that call it.
func (a *Service) createClient(ctx context.Context, tenantID string, kind apiclient.Kind, name string, scopes []string) (*ClientCredentials, error) {
	if err := kernel.Guarded("tenant_id", tenantID, "name", name, "scopes", scopes); err != nil {
		return nil, err
	}
	return CreateClientIn(ctx, a.k.DB.Ent, tenantID, "", kind, name, scopes)
}

// CreateClientIn creates a client with the given id, or a generated one when
// id is empty.
func CreateClientIn(ctx context.Context, c *ent.Client, tenantID, id string, kind apiclient.Kind, name string, scopes []string) (*ClientCredentials, error) {
	if err := apiclient.KindValidator(kind); err != nil {
		return nil, apperr.Invalid("kind", "kind must be oauth or pos")
	}
	switch {
	case kind == apiclient.KindPos && len(scopes) > 0:
		return nil, apperr.Invalid("scopes", "pos clients have no scopes")
	case kind == apiclient.KindOauth && len(scopes) == 0:
		scopes = auth.Scopes
	}
	for _, s := range scopes {
		if !slices.Contains(auth.Scopes, s) {
			return nil, apperr.Invalid("scopes", "unknown scope %q (known: %v)", s, auth.Scopes)
		}
	}
	secret, hash := auth.NewSecret()
	create := c.APIClient.Create().
		SetTenantID(tenantID).SetKind(kind).SetName(name).SetScopes(scopes).SetSecretHash(hash)
	if id != "" {
		create.SetID(id)
	}
	created, err := create.Save(ctx)
	if err != nil {
		return nil, err
	}
	return &ClientCredentials{Client: created, Secret: secret}, nil
}

// RotateClient gives a client a new secret; the old one stops working at
// once in this process, within auth.POSLoginTTL in others.
func (a *Service) RotateClient(ctx context.Context, clientID string) (*ClientCredentials, error) {
	if err := Rules.RotateClient.Allow(ctx); err != nil {
		return nil, err
	}
	return a.rotateClient(ctx, clientID)
}

// rotateClient is RotateClient without its policy check, for the operations
// of this context that call it.
func (a *Service) rotateClient(ctx context.Context, clientID string) (*ClientCredentials, error) {
	if err := kernel.Guarded("client_id", clientID); err != nil {
		return nil, err
	}
	c, err := RotateClientIn(ctx, a.k.DB.Ent, clientID)
	if err == nil {
		a.k.Auth.Forget("", clientID)
	}
	return c, err
}

func RotateClientIn(ctx context.Context, client *ent.Client, clientID string) (*ClientCredentials, error) {
	secret, hash := auth.NewSecret()
	c, err := client.APIClient.UpdateOneID(clientID).Where(apiclient.Revoked(false)).SetSecretHash(hash).Save(ctx)
	if err != nil {
		return nil, kernel.NotFoundAs(err, "client")
	}
	return &ClientCredentials{Client: c, Secret: secret}, nil
}

// RevokeClient revokes a client for good. Its secret stops working at once;
// tokens already issued stop within auth.DefaultClientCheckTTL.
func (a *Service) RevokeClient(ctx context.Context, clientID string) (*ent.APIClient, error) {
	if err := Rules.RevokeClient.Allow(ctx); err != nil {
		return nil, err
	}
	if err := kernel.Guarded("client_id", clientID); err != nil {
		return nil, err
	}
	c, err := a.k.DB.Ent.APIClient.UpdateOneID(clientID).SetRevoked(true).Save(ctx)
	if err == nil {
		a.k.Auth.Forget("", clientID)
	}
	return c, kernel.NotFoundAs(err, "client")
}

// RecentAuditEvents lists the latest audit events of the viewer's tenant,
// newest first. Administrators only.
func (a *Service) RecentAuditEvents(ctx context.Context, limit int) ([]*ent.AuditEvent, error) {
	if err := Rules.RecentAuditEvents.Allow(ctx); err != nil {
		return nil, err
	}
	return a.k.DB.Ent.AuditEvent.Query().Order(ent.Desc(auditevent.FieldID)).Limit(limit).All(ctx)
}

// shareLevels are the levels that may have a share of their own.
var shareLevels = []customer.Level{customer.LevelSilver, customer.LevelGold, customer.LevelDiamond}

// levelShareSetters set and clear level's share (silver, gold or
// diamond) in u.
func levelShareSetters(u *ent.TenantUpdateOne, level customer.Level) (set func(decimal.Decimal), unset func()) {
	switch level {
	case customer.LevelSilver:
		return func(d decimal.Decimal) { u.SetPointsSpendMaxShareSilver(d) }, func() { u.ClearPointsSpendMaxShareSilver() }
	case customer.LevelGold:
		return func(d decimal.Decimal) { u.SetPointsSpendMaxShareGold(d) }, func() { u.ClearPointsSpendMaxShareGold() }
	default:
		return func(d decimal.Decimal) { u.SetPointsSpendMaxShareDiamond(d) }, func() { u.ClearPointsSpendMaxShareDiamond() }
	}
}
