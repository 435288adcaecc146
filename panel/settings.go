package panel

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/ent"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/httperr"
)

// settingField is one programme setting of the settings form: its form
// name, its label and hint, and where a value given for it goes.
type settingField struct {
	Name, Label, Hint string
	Value             string // shown in the form
	Stored            string // the tenant's: a value equal to it is no change
	Decimal           bool
	Clearable         bool // an empty value is a value (an empty list), not no change
	set               func(s *backoffice.TenantSettings, v string) error
}

// intSetting sets an integer setting through dst.
func intSetting[T int | int64](dst func(*backoffice.TenantSettings) **T) func(*backoffice.TenantSettings, string) error {
	return func(s *backoffice.TenantSettings, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return err
		}
		*dst(s) = new(T(n))
		return nil
	}
}

// decimalSetting sets a decimal setting through dst.
func decimalSetting(dst func(*backoffice.TenantSettings) **decimal.Decimal) func(*backoffice.TenantSettings, string) error {
	return func(s *backoffice.TenantSettings, v string) error {
		d, err := decimal.NewFromString(v)
		if err != nil {
			return err
		}
		*dst(s) = &d
		return nil
	}
}

// channelsSetting sets a list of channels, comma-separated, through dst:
// empty is none.
func channelsSetting(dst func(*backoffice.TenantSettings) **[]string) func(*backoffice.TenantSettings, string) error {
	return func(s *backoffice.TenantSettings, v string) error {
		chans := []string{}
		for c := range strings.SplitSeq(v, ",") {
			if c = strings.TrimSpace(c); c != "" {
				chans = append(chans, c)
			}
		}
		*dst(s) = &chans
		return nil
	}
}

// levelShareSetting is a level's own share of a sale payable with points:
// empty sends the level back to the programme's share.
func levelShareSetting(level customer.Level, label, hint string) settingField {
	return settingField{Name: "points_spend_max_share_" + string(level), Label: label, Hint: hint, Decimal: true, Clearable: true,
		set: func(s *backoffice.TenantSettings, v string) error {
			var share *decimal.Decimal
			if v != "" {
				d, err := decimal.NewFromString(v)
				if err != nil {
					return err
				}
				share = &d
			}
			if s.PointsSpendMaxShareLevels == nil {
				s.PointsSpendMaxShareLevels = map[customer.Level]*decimal.Decimal{}
			}
			s.PointsSpendMaxShareLevels[level] = share
			return nil
		}}
}

// settingFields are the programme's settings as the form shows them: the
// stored values, and those shown (the stored ones unless given).
func settingFields(stored, shown map[string]string) []settingField {
	fields := []settingField{
		{Name: "points_per_real", Label: "Points per R$ 1", Hint: "Points earned per whole real paid.", Decimal: true,
			set: decimalSetting(func(s *backoffice.TenantSettings) **decimal.Decimal { return &s.PointsPerReal })},
		{Name: "points_expiry_months", Label: "Points expire after (months)", Hint: "1 to 120; for points earned from the change on.",
			set: intSetting(func(s *backoffice.TenantSettings) **int { return &s.PointsExpiryMonths })},
		{Name: "points_pending_days", Label: "Points pending for (days)", Hint: "0 to 90: days after a sale before its points can be spent.",
			set: intSetting(func(s *backoffice.TenantSettings) **int { return &s.PointsPendingDays })},
		{Name: "time_zone", Label: "Time zone", Hint: "IANA name, such as America/Sao_Paulo: points expire at its midnights; levels and dashboards count its days.",
			set: func(s *backoffice.TenantSettings, v string) error { s.TimeZone = &v; return nil }},
		{Name: "silver_threshold", Label: "Silver from (points in 12 months)", Hint: "The thresholds must rise strictly.",
			set: intSetting(func(s *backoffice.TenantSettings) **int64 { return &s.SilverThreshold })},
		{Name: "gold_threshold", Label: "Gold from (points in 12 months)",
			set: intSetting(func(s *backoffice.TenantSettings) **int64 { return &s.GoldThreshold })},
		{Name: "diamond_threshold", Label: "Diamond from (points in 12 months)",
			set: intSetting(func(s *backoffice.TenantSettings) **int64 { return &s.DiamondThreshold })},
		{Name: "level_grace_days", Label: "Level kept after a fall (days)", Hint: "0 to 365; the customer is told when the level will drop.",
			set: intSetting(func(s *backoffice.TenantSettings) **int { return &s.LevelGraceDays })},
		{Name: "price_code_bronze", Label: "POS price code, bronze", Hint: "0 to 9999, for identify's priceCode.",
			set: intSetting(func(s *backoffice.TenantSettings) **int { return &s.PriceCodeBronze })},
		{Name: "price_code_silver", Label: "POS price code, silver",
			set: intSetting(func(s *backoffice.TenantSettings) **int { return &s.PriceCodeSilver })},
		{Name: "price_code_gold", Label: "POS price code, gold",
			set: intSetting(func(s *backoffice.TenantSettings) **int { return &s.PriceCodeGold })},
		{Name: "price_code_diamond", Label: "POS price code, diamond",
			set: intSetting(func(s *backoffice.TenantSettings) **int { return &s.PriceCodeDiamond })},
		{Name: "points_value", Label: "Value of a point spent (R$)", Hint: "0.01: 100 points pay R$ 1.00 at the till or at checkout.", Decimal: true,
			set: decimalSetting(func(s *backoffice.TenantSettings) **decimal.Decimal { return &s.PointsValue })},
		{Name: "points_spend_min", Label: "Fewest points spent at once", Hint: "0 (any) to 1000000.",
			set: intSetting(func(s *backoffice.TenantSettings) **int64 { return &s.PointsSpendMin })},
		{Name: "points_spend_max_share", Label: "Largest share payable with points", Hint: "0 to 1 (0.5: half of a sale).", Decimal: true,
			set: decimalSetting(func(s *backoffice.TenantSettings) **decimal.Decimal { return &s.PointsSpendMaxShare })},
		levelShareSetting(customer.LevelSilver, "Largest share payable with points, silver",
			"0 to 1, for silver customers; empty: the programme's share."),
		levelShareSetting(customer.LevelGold, "Largest share payable with points, gold", ""),
		levelShareSetting(customer.LevelDiamond, "Largest share payable with points, diamond", ""),
		{Name: "points_spend_channels", Label: "Points pay as money at", Hint: "pdv, ecommerce, comma-separated; empty: nowhere.", Clearable: true,
			set: channelsSetting(func(s *backoffice.TenantSettings) **[]string { return &s.PointsSpendChannels })},
		{Name: "cashback_spend_channels", Label: "Cashback pays at", Hint: "pdv, ecommerce, comma-separated; empty: nowhere.", Clearable: true,
			set: channelsSetting(func(s *backoffice.TenantSettings) **[]string { return &s.CashbackSpendChannels })},
		{Name: "cashback_spend_max_share", Label: "Largest share payable with cashback", Hint: "0 to 1 (0.1: a tenth of a sale).", Decimal: true,
			set: decimalSetting(func(s *backoffice.TenantSettings) **decimal.Decimal { return &s.CashbackSpendMaxShare })},
		{Name: "cashback_spend_min", Label: "Fewest R$ of cashback spent at once", Hint: "0 (any) to 10000.", Decimal: true,
			set: decimalSetting(func(s *backoffice.TenantSettings) **decimal.Decimal { return &s.CashbackSpendMin })},
		{Name: "churn_refit_days", Label: "Churn model refitted every (days)", Hint: "1 to 90; customers are scored daily.",
			set: intSetting(func(s *backoffice.TenantSettings) **int { return &s.ChurnRefitDays })},
	}
	for i := range fields {
		f := &fields[i]
		f.Stored = stored[f.Name]
		f.Value = f.Stored
		if v, ok := shown[f.Name]; ok {
			f.Value = v
		}
	}
	return fields
}

func (p *panel) settings(w http.ResponseWriter, r *http.Request) {
	p.renderSettings(w, r, http.StatusOK, "", nil)
}

// renderSettings shows the programme settings of the viewer's tenant: the
// stored ones, or those of form when a change was refused (with msg).
func (p *panel) renderSettings(w http.ResponseWriter, r *http.Request, status int, msg string, form map[string]string) {
	tenants, err := p.app.Backoffice.ManagedTenants(r.Context())
	if err != nil {
		p.fail(w, r, err)
		return
	}
	t := tenants[0]
	data := page{Title: "Programme settings", Error: msg, Production: t, Settings: settingFields(storedSettings(t), form)}
	if msg == "" {
		data.Flash = flashes[r.URL.Query().Get("done")]
	}
	p.render(w, r, status, "settings", data)
}

// storedSettings are tenant t's programme settings as the form writes them.
func storedSettings(t *ent.Tenant) map[string]string {
	rules := loyalty.SpendRules(t, "")
	stored := map[string]string{
		"points_per_real": t.PointsPerReal.String(), "points_expiry_months": strconv.Itoa(t.PointsExpiryMonths),
		"points_pending_days": strconv.Itoa(t.PointsPendingDays), "time_zone": t.TimeZone,
		"silver_threshold": strconv.FormatInt(t.SilverThreshold, 10), "gold_threshold": strconv.FormatInt(t.GoldThreshold, 10),
		"diamond_threshold": strconv.FormatInt(t.DiamondThreshold, 10), "level_grace_days": strconv.Itoa(t.LevelGraceDays),
		"price_code_bronze": strconv.Itoa(t.PriceCodeBronze), "price_code_silver": strconv.Itoa(t.PriceCodeSilver),
		"price_code_gold": strconv.Itoa(t.PriceCodeGold), "price_code_diamond": strconv.Itoa(t.PriceCodeDiamond),
		"churn_refit_days": strconv.Itoa(t.ChurnRefitDays),
		"points_value":     rules.Value.String(), "points_spend_min": strconv.FormatInt(t.PointsSpendMin, 10),
		"points_spend_max_share": rules.MaxShare.String(), "points_spend_channels": strings.Join(t.PointsSpendChannels, ","),
		"cashback_spend_channels": strings.Join(t.CashbackSpendChannels, ","), "cashback_spend_max_share": t.CashbackSpendMaxShare.String(),
		"cashback_spend_min": t.CashbackSpendMin.StringFixed(2),
	}
	for level, share := range loyalty.LevelShares(t) {
		stored["points_spend_max_share_"+string(level)] = ""
		if share != nil {
			stored["points_spend_max_share_"+string(level)] = share.String()
		}
	}
	return stored
}

// saveSettings changes the settings the form gives other values than the
// stored ones; the others are left as they are, so that two admins changing
// different settings at once do not undo each other.
func (p *panel) saveSettings(w http.ResponseWriter, r *http.Request) {
	if !p.parseForm(w, r) {
		return
	}
	tenants, err := p.app.Backoffice.ManagedTenants(r.Context())
	if err != nil {
		p.fail(w, r, err)
		return
	}
	form := map[string]string{}
	var s backoffice.TenantSettings
	fields := settingFields(storedSettings(tenants[0]), nil)
	for _, f := range fields {
		if _, ok := r.PostForm[f.Name]; !ok {
			continue
		}
		v := strings.TrimSpace(r.PostFormValue(f.Name))
		form[f.Name] = v
		if (v == "" && !f.Clearable) || v == f.Stored {
			continue
		}
		if err := f.set(&s, v); err != nil {
			p.renderSettings(w, r, http.StatusUnprocessableEntity, f.Label+": "+strconv.Quote(v)+" is not a number.", form)
			return
		}
	}
	if _, err := p.app.Backoffice.UpdateTenant(r.Context(), tenants[0].ID, s); err != nil {
		e, ok := httperr.As(err)
		if !ok {
			p.fail(w, r, err)
			return
		}
		status, msg := p.explain(r, err)
		// A field's problem is told with the field's label.
		for _, f := range fields {
			if len(e.Details) > 0 && e.Details[0].Field == f.Name {
				msg = f.Label + ": " + e.Details[0].Message + "."
			}
		}
		p.renderSettings(w, r, status, msg, form)
		return
	}
	http.Redirect(w, r, Base+"/settings?done=settings-saved", http.StatusSeeOther)
}
