package main

import (
	"fmt"
	"os"
	"os/user"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"github.com/spf13/cobra"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/backoffice"
	"github.com/fideliza/fideliza/app/loyalty"
	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/ent/apiclient"
	"github.com/fideliza/fideliza/ent/customer"
	"github.com/fideliza/fideliza/viewer"
)

// adminRun opens the database and runs fn as the operator.
func adminRun(g *globals, fn func(cmd *cobra.Command, a *app.App) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		log, err := g.logger()
		if err != nil {
			return err
		}
		a, err := g.open(cmd.Context(), log, defaultPublicURL())
		if err != nil {
			return err
		}
		defer a.DB.Close()
		cmd.SetContext(viewer.OperatorContext(cmd.Context(), operator()))
		return fn(cmd, a)
	}
}

// operator names who runs the admin CLI, for the audit trail: FIDELIZA_OPERATOR
// when set (in a container the system user says little), else the system user.
func operator() string {
	if name := os.Getenv("FIDELIZA_OPERATOR"); name != "" {
		return name
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "unknown"
}

func newMigrateCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Apply the schema and River migrations, then exit",
		RunE: adminRun(g, func(cmd *cobra.Command, a *app.App) error {
			m := g.migrated
			human := fmt.Sprintf("applied %d migrations; the database is at version %d", m.Applied, m.Version)
			if m.Applied == 0 {
				human = fmt.Sprintf("the database is up to date, at version %d", m.Version)
			}
			return g.print(map[string]any{"status": "migrated", "dialect": a.DB.Dialect, "applied": m.Applied, "version": m.Version}, human)
		}),
	}
}

func newTenantCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "tenant", Short: "Create and configure tenants (retailers)"}

	var name, sandboxOf string
	create := &cobra.Command{
		Use:   "create",
		Short: "Create a tenant",
		RunE: adminRun(g, func(cmd *cobra.Command, a *app.App) error {
			var parent *string
			if sandboxOf != "" {
				parent = &sandboxOf
			}
			t, err := a.Backoffice.CreateTenant(cmd.Context(), name, parent)
			if err != nil {
				return err
			}
			out := map[string]any{"id": t.ID, "name": t.Name}
			if t.SandboxOfID != nil {
				out["sandbox_of"] = *t.SandboxOfID
			}
			return g.print(out, fmt.Sprintf("tenant %s created: %s", t.Name, t.ID))
		}),
	}
	create.Flags().StringVar(&name, "name", "", "display name of the retailer")
	create.Flags().StringVar(&sandboxOf, "sandbox-of", "", "id of the production tenant this is a sandbox of")
	_ = create.MarkFlagRequired("name")

	var (
		tenantID                                  string
		preRegistration, saleRegistration, active bool
		cashbackAsPoints                          bool
		saleTolerance, pointsPerReal, newName     string
		expiryMonths, pendingDays, graceDays      int
		refitDays                                 int
		timeZone                                  string
		silver, gold, diamond                     int64
		priceCodes                                [4]int // bronze, silver, gold, diamond
		corsOrigins                               []string
		pointsValue, spendMaxShare                string
		levelShares                               []string
		spendMin                                  int64
		spendChannels                             []string
		cashbackChannels                          []string
		cashbackMaxShare, cashbackMin             string
	)
	update := &cobra.Command{
		Use:   "update",
		Short: "Change the settings of a tenant",
		RunE: adminRun(g, func(cmd *cobra.Command, a *app.App) error {
			var s backoffice.TenantSettings
			fl := cmd.Flags()
			if fl.Changed("name") {
				s.Name = &newName
			}
			if fl.Changed("active") {
				s.Active = &active
			}
			if fl.Changed("pre-registration") {
				s.PreRegistration = &preRegistration
			}
			if fl.Changed("sale-registration") {
				s.SaleRegistration = &saleRegistration
			}
			if fl.Changed("cashback-as-points") {
				s.CashbackAsPoints = &cashbackAsPoints
			}
			for _, d := range []struct {
				flag, value string
				dst         **decimal.Decimal
			}{{"sale-tolerance", saleTolerance, &s.SaleTolerance}, {"points-per-real", pointsPerReal, &s.PointsPerReal},
				{"points-value", pointsValue, &s.PointsValue}, {"points-spend-max-share", spendMaxShare, &s.PointsSpendMaxShare},
				{"cashback-spend-max-share", cashbackMaxShare, &s.CashbackSpendMaxShare}, {"cashback-spend-min", cashbackMin, &s.CashbackSpendMin}} {
				if !fl.Changed(d.flag) {
					continue
				}
				v, err := decimal.NewFromString(d.value)
				if err != nil {
					return fmt.Errorf("--%s %q is not a decimal number", d.flag, d.value)
				}
				*d.dst = &v
			}
			for _, ls := range levelShares {
				level, share, ok := strings.Cut(ls, "=")
				if !ok {
					return fmt.Errorf("--points-spend-max-share-level %q is not LEVEL=SHARE (gold=0.8; gold= for the programme's)", ls)
				}
				if s.PointsSpendMaxShareLevels == nil {
					s.PointsSpendMaxShareLevels = map[customer.Level]*decimal.Decimal{}
				}
				s.PointsSpendMaxShareLevels[customer.Level(level)] = nil
				if share != "" {
					v, err := decimal.NewFromString(share)
					if err != nil {
						return fmt.Errorf("--points-spend-max-share-level %q: %q is not a decimal number", ls, share)
					}
					s.PointsSpendMaxShareLevels[customer.Level(level)] = &v
				}
			}
			if fl.Changed("time-zone") {
				s.TimeZone = &timeZone
			}
			for flag, v := range map[string]struct {
				src *int
				dst **int
			}{
				"points-expiry-months": {&expiryMonths, &s.PointsExpiryMonths},
				"points-pending-days":  {&pendingDays, &s.PointsPendingDays},
				"level-grace-days":     {&graceDays, &s.LevelGraceDays},
				"churn-refit-days":     {&refitDays, &s.ChurnRefitDays},
			} {
				if fl.Changed(flag) {
					*v.dst = v.src
				}
			}
			for flag, v := range map[string]struct {
				src *int64
				dst **int64
			}{"silver-threshold": {&silver, &s.SilverThreshold}, "gold-threshold": {&gold, &s.GoldThreshold},
				"diamond-threshold": {&diamond, &s.DiamondThreshold}, "points-spend-min": {&spendMin, &s.PointsSpendMin}} {
				if fl.Changed(flag) {
					*v.dst = v.src
				}
			}
			for i, flag := range []string{"price-code-bronze", "price-code-silver", "price-code-gold", "price-code-diamond"} {
				if fl.Changed(flag) {
					*[]**int{&s.PriceCodeBronze, &s.PriceCodeSilver, &s.PriceCodeGold, &s.PriceCodeDiamond}[i] = &priceCodes[i]
				}
			}
			if fl.Changed("cors-origins") {
				s.CORSOrigins = &corsOrigins
			}
			if fl.Changed("points-spend-channels") {
				s.PointsSpendChannels = &spendChannels
			}
			if fl.Changed("cashback-spend-channels") {
				s.CashbackSpendChannels = &cashbackChannels
			}
			t, err := a.Backoffice.UpdateTenant(cmd.Context(), tenantID, s)
			if err != nil {
				return err
			}
			rules := loyalty.SpendRules(t, "")
			byLevel := map[string]string{}
			for level, share := range loyalty.LevelShares(t) {
				if share != nil {
					byLevel[string(level)] = share.String()
				}
			}
			return g.print(map[string]any{
				"id": t.ID, "name": t.Name, "active": t.Active,
				"pre_registration": t.PreRegistration, "sale_registration": t.SaleRegistration,
				"sale_tolerance": t.SaleTolerance.String(), "points_per_real": t.PointsPerReal.String(),
				"points_expiry_months": t.PointsExpiryMonths, "time_zone": t.TimeZone,
				"points_pending_days": t.PointsPendingDays, "level_grace_days": t.LevelGraceDays,
				"churn_refit_days": t.ChurnRefitDays, "cashback_as_points": t.CashbackAsPoints,
				"thresholds": map[string]int64{"silver": t.SilverThreshold, "gold": t.GoldThreshold, "diamond": t.DiamondThreshold},
				"price_codes": map[string]int{"bronze": t.PriceCodeBronze, "silver": t.PriceCodeSilver, "gold": t.PriceCodeGold,
					"diamond": t.PriceCodeDiamond},
				"cors_origins": t.CorsOrigins,
				"points_spend": map[string]any{"value": rules.Value.String(), "min": rules.Min,
					"max_share": rules.MaxShare.String(), "max_share_by_level": byLevel, "channels": t.PointsSpendChannels},
				"cashback_spend": map[string]any{"min": t.CashbackSpendMin.StringFixed(2), "max_share": t.CashbackSpendMaxShare.String(),
					"channels": t.CashbackSpendChannels},
			}, fmt.Sprintf("tenant %s updated", t.ID))
		}),
	}
	uf := update.Flags()
	uf.StringVar(&tenantID, "tenant", "", "tenant id")
	uf.StringVar(&newName, "name", "", "new display name")
	uf.BoolVar(&active, "active", true, "whether the tenant is active")
	uf.BoolVar(&preRegistration, "pre-registration", false, "identify pre-registers unknown customers")
	uf.BoolVar(&saleRegistration, "sale-registration", true, "the point of sale may register sales")
	uf.BoolVar(&cashbackAsPoints, "cashback-as-points", true, "cashback campaigns credit points (true) or R$ to the customers' cashback wallets (false)")
	uf.StringVar(&saleTolerance, "sale-tolerance", "0.10", "accepted R$ difference between items total and sale value")
	uf.StringVar(&pointsPerReal, "points-per-real", "1", "points earned per whole R$ 1")
	uf.IntVar(&expiryMonths, "points-expiry-months", 12, "months until earned points expire (1 to 120), for points earned from now on")
	uf.StringVar(&timeZone, "time-zone", "America/Sao_Paulo", "IANA time zone of the programme's days and midnights")
	uf.IntVar(&pendingDays, "points-pending-days", 0, "days before earned points become spendable (0 to 90), for points earned from now on")
	uf.IntVar(&graceDays, "level-grace-days", 0, "days a level is kept after its points fall short (0 to 365)")
	uf.IntVar(&refitDays, "churn-refit-days", 7, "days between fits of the churn model (1 to 90)")
	uf.Int64Var(&silver, "silver-threshold", 1000, "points earned in 12 months to reach silver")
	uf.Int64Var(&gold, "gold-threshold", 5000, "points earned in 12 months to reach gold (above silver)")
	uf.Int64Var(&diamond, "diamond-threshold", 20000, "points earned in 12 months to reach diamond (above gold)")
	for i, level := range []string{"bronze", "silver", "gold", "diamond"} {
		uf.IntVar(&priceCodes[i], "price-code-"+level, 0, "POS price code of "+level+" customers (0 to 9999)")
	}
	uf.StringVar(&pointsValue, "points-value", "0.01", "R$ one point pays at the till or at checkout (0.01: 100 points pay R$ 1.00)")
	uf.Int64Var(&spendMin, "points-spend-min", 0, "the fewest points a customer may spend at once (0 to 1000000)")
	uf.StringVar(&spendMaxShare, "points-spend-max-share", "0.5", "the largest share of a sale payable with points (0 to 1)")
	uf.StringArrayVar(&levelShares, "points-spend-max-share-level", nil,
		"LEVEL=SHARE: a level's own largest share (silver, gold, diamond; 0 to 1); LEVEL= goes back to the programme's; repeatable")
	uf.StringSliceVar(&spendChannels, "points-spend-channels", nil,
		"channels where points pay as money, comma-separated: pdv, ecommerce; \"\" turns spending off")
	uf.StringSliceVar(&cashbackChannels, "cashback-spend-channels", []string{"ecommerce", "pdv"},
		"channels where the cashback wallet pays, comma-separated: pdv, ecommerce; \"\" turns spending off")
	uf.StringVar(&cashbackMaxShare, "cashback-spend-max-share", "1", "the largest share of a sale or order payable with cashback (0 to 1)")
	uf.StringVar(&cashbackMin, "cashback-spend-min", "0", "the fewest R$ of cashback a customer may spend at once (0 to 10000)")
	uf.StringSliceVar(&corsOrigins, "cors-origins", nil,
		"origins of the tenant's back-office web apps allowed to call the API from a browser, comma-separated (scheme://host[:port]); \"\" clears them")
	_ = update.MarkFlagRequired("tenant")

	cmd.AddCommand(create, update)
	return cmd
}

func newStoreCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "store", Short: "Register stores"}
	var tenantID, code, name string
	var groups []string
	create := &cobra.Command{
		Use:   "create",
		Short: "Register a store under its external code",
		RunE: adminRun(g, func(cmd *cobra.Command, a *app.App) error {
			s, err := a.Backoffice.CreateStore(cmd.Context(), tenantID, code, name, groups...)
			if err != nil {
				return err
			}
			return g.print(map[string]any{"id": s.ID, "tenant_id": s.TenantID, "code": s.Code, "name": s.Name, "groups": s.Groups},
				fmt.Sprintf("store %s (%s) created: %s", s.Name, s.Code, s.ID))
		}),
	}
	create.Flags().StringVar(&tenantID, "tenant", "", "tenant id")
	create.Flags().StringVar(&code, "code", "", "the store's code in the retailer's systems")
	create.Flags().StringVar(&name, "name", "", "display name")
	create.Flags().StringArrayVar(&groups, "group", nil, "a group (region) of the store, which campaigns may target; repeat for several")
	for _, f := range []string{"tenant", "code", "name"} {
		_ = create.MarkFlagRequired(f)
	}
	cmd.AddCommand(create)
	return cmd
}

func newClientCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "client", Short: "Issue, rotate and revoke API credentials"}
	var tenantID, kind, scopes, name string
	create := &cobra.Command{
		Use:   "create",
		Short: "Create an OAuth or POS client; its secret is printed only here",
		RunE: adminRun(g, func(cmd *cobra.Command, a *app.App) error {
			cred, err := a.Backoffice.CreateClient(cmd.Context(), tenantID, apiclient.Kind(kind), name, strings.Fields(scopes))
			if err != nil {
				return err
			}
			return printCredentials(g, cred)
		}),
	}
	create.Flags().StringVar(&tenantID, "tenant", "", "tenant id")
	create.Flags().StringVar(&kind, "kind", "", "oauth or pos")
	create.Flags().StringVar(&scopes, "scopes", "", `space-separated OAuth scopes (default: all), e.g. "customers:read campaigns:read"`)
	create.Flags().StringVar(&name, "name", "", "a label for people")
	_ = create.MarkFlagRequired("tenant")
	_ = create.MarkFlagRequired("kind")

	var clientID string
	rotate := &cobra.Command{
		Use:   "rotate",
		Short: "Issue a new secret; the old one stops working",
		RunE: adminRun(g, func(cmd *cobra.Command, a *app.App) error {
			cred, err := a.Backoffice.RotateClient(cmd.Context(), clientID)
			if err != nil {
				return err
			}
			return printCredentials(g, cred)
		}),
	}
	rotate.Flags().StringVar(&clientID, "client-id", "", "client id")
	_ = rotate.MarkFlagRequired("client-id")
	revoke := &cobra.Command{
		Use:   "revoke",
		Short: "Revoke a client for good; its tokens stop working within 30 s",
		RunE: adminRun(g, func(cmd *cobra.Command, a *app.App) error {
			c, err := a.Backoffice.RevokeClient(cmd.Context(), clientID)
			if err != nil {
				return err
			}
			return g.print(map[string]any{"client_id": c.ID, "revoked": c.Revoked}, "client "+c.ID+" revoked")
		}),
	}
	revoke.Flags().StringVar(&clientID, "client-id", "", "client id")
	_ = revoke.MarkFlagRequired("client-id")
	cmd.AddCommand(create, rotate, revoke)
	return cmd
}

func printCredentials(g *globals, cred *backoffice.ClientCredentials) error {
	c := cred.Client
	scopes := c.Scopes
	if scopes == nil {
		scopes = []string{}
	}
	return g.print(map[string]any{
		"client_id": c.ID, "client_secret": cred.Secret, "kind": c.Kind, "scopes": scopes, "tenant_id": c.TenantID,
	}, fmt.Sprintf("client_id:     %s\nclient_secret: %s\nkind:          %s\nscopes:        %s\n(the secret is shown only now; store it safely)",
		c.ID, cred.Secret, c.Kind, strings.Join(scopes, " ")))
}

func newKeysCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "keys", Short: "Manage the keys access tokens are signed with, and the data key documents and those keys are sealed with"}
	cmd.AddCommand(newDataKeyCommands(g)...)
	cmd.AddCommand(&cobra.Command{
		Use:   "rotate",
		Short: "Publish a new key, which signs once verifiers' caches have it (6 minutes); tokens of the old key work until they expire",
		RunE: adminRun(g, func(cmd *cobra.Command, a *app.App) error {
			kid, err := a.Auth.Keys.Rotate(cmd.Context())
			if err != nil {
				return err
			}
			return g.print(map[string]any{"kid": kid, "signs_after_seconds": int(auth.PublishLead.Seconds())},
				fmt.Sprintf("new key %s published; it signs new tokens in %s", kid, auth.PublishLead))
		}),
	})
	return cmd
}

func newUserCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "user", Short: "Back-office users without an external OpenID provider"}
	var tenantID, role, subject string
	var ttl time.Duration
	token := &cobra.Command{
		Use:   "token",
		Short: "Sign a token for a back-office user (developer panel, playground); use serve's --public-url",
		RunE: adminRun(g, func(cmd *cobra.Command, a *app.App) error {
			tok, err := a.Auth.IssueUserToken(cmd.Context(), tenantID, viewer.Role(role), subject, ttl)
			if err != nil {
				return err
			}
			return g.print(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": int(ttl.Seconds()),
				"tenant_id": tenantID, "role": role}, tok)
		}),
	}
	token.Flags().StringVar(&tenantID, "tenant", "", "tenant id")
	token.Flags().StringVar(&role, "role", string(viewer.RoleAdmin), "admin or analyst")
	token.Flags().StringVar(&subject, "subject", "operator", "who the token is for, as logs will name them")
	token.Flags().DurationVar(&ttl, "ttl", auth.DefaultUserTokenLifetime, "lifetime, at most "+auth.LongestTokenLifetime.String())
	_ = token.MarkFlagRequired("tenant")
	cmd.AddCommand(token)
	return cmd
}
