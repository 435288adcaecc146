package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/auth"
	"github.com/fideliza/fideliza/demoyear"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/tracing"
)

// globals are the options every command reads.
type globals struct {
	databaseURL string
	dataKeyFile string
	jsonOutput  bool
	logLevel    string
	publicURL   string
	audience    string
	oidc        auth.OIDCConfig
	// webhookLoopback lets webhook endpoints be on this machine (serve, worker).
	webhookLoopback bool
	// migrated is what open's migrations did, for migrate to say.
	migrated storage.Migrated
	stdout   io.Writer
	stderr   io.Writer
}

func newRootCommand(stdout, stderr io.Writer) *cobra.Command {
	g := &globals{stdout: stdout, stderr: stderr}
	root := &cobra.Command{
		Use:           "fideliza",
		Short:         "Loyalty, CRM and promotions platform for Brazilian retail",
		SilenceUsage:  true,
		SilenceErrors: true,
		// A database URL no database can be opened by is named before any
		// command does anything, serve's listening included.
		PersistentPreRunE: func(*cobra.Command, []string) error {
			_, err := storage.ParseURL(g.databaseURL)
			return err
		},
	}
	f := root.PersistentFlags()
	f.StringVar(&g.databaseURL, "database-url", env("FIDELIZA_DATABASE_URL", storage.DefaultURL),
		"database: sqlite:///abs/file.db, sqlite://relative.db or postgres://… (env FIDELIZA_DATABASE_URL)")
	f.BoolVar(&g.jsonOutput, "json", false, "print one JSON object instead of a human summary")
	f.StringVar(&g.dataKeyFile, "data-key-file", env("FIDELIZA_DATA_KEY_FILE", ""),
		"file of the key documents (CPF, CNPJ) and signing keys are sealed with; default: beside an embedded database's file, created on first start (env FIDELIZA_DATA_KEY_FILE)")
	f.StringVar(&g.logLevel, "log-level", env("FIDELIZA_LOG_LEVEL", "info"), "debug, info, warn or error (env FIDELIZA_LOG_LEVEL)")
	f.StringVar(&g.publicURL, "public-url", env("FIDELIZA_PUBLIC_URL", ""),
		"base URL clients reach the service at; the token issuer (env FIDELIZA_PUBLIC_URL; default http://<addr>)")
	f.StringVar(&g.audience, "audience", env("FIDELIZA_AUDIENCE", "fideliza"), "aud claim of access tokens (env FIDELIZA_AUDIENCE)")
	f.StringVar(&g.oidc.Issuer, "oidc-issuer", env("FIDELIZA_OIDC_ISSUER", ""),
		"issuer URL of an external OpenID provider whose tokens back-office users sign in with (env FIDELIZA_OIDC_ISSUER)")
	f.StringVar(&g.oidc.Audience, "oidc-audience", env("FIDELIZA_OIDC_AUDIENCE", ""),
		"aud the external provider's tokens must carry; required with --oidc-issuer (env FIDELIZA_OIDC_AUDIENCE)")
	f.StringVar(&g.oidc.TenantClaim, "oidc-tenant-claim", env("FIDELIZA_OIDC_TENANT_CLAIM", auth.DefaultOIDCTenantClaim),
		"claim of the external provider's tokens with the user's tenant id (env FIDELIZA_OIDC_TENANT_CLAIM)")
	f.StringVar(&g.oidc.RoleClaim, "oidc-role-claim", env("FIDELIZA_OIDC_ROLE_CLAIM", auth.DefaultOIDCRoleClaim),
		"claim of the external provider's tokens with the user's role, admin or analyst (env FIDELIZA_OIDC_ROLE_CLAIM)")
	f.StringVar(&g.oidc.ClientID, "oidc-client-id", env("FIDELIZA_OIDC_CLIENT_ID", ""),
		"this service's client id at the external provider: enables \"Sign in with SSO\" (redirect URI <public-url>"+auth.SignInPath+") (env FIDELIZA_OIDC_CLIENT_ID)")
	f.StringVar(&g.oidc.ClientSecret, "oidc-client-secret", env("FIDELIZA_OIDC_CLIENT_SECRET", ""),
		"its secret; empty for a public client, PKCE protects the code either way (env FIDELIZA_OIDC_CLIENT_SECRET)")

	f.BoolVar(&g.webhookLoopback, "webhook-allow-loopback", envBool("FIDELIZA_WEBHOOK_ALLOW_LOOPBACK", false),
		"let webhook endpoints be http(s) URLs on 127.0.0.1/::1, for local development; never in production (env FIDELIZA_WEBHOOK_ALLOW_LOOPBACK)")

	root.AddCommand(
		newServeCommand(g), newWorkerCommand(g), newMigrateCommand(g),
		newTenantCommand(g), newStoreCommand(g), newClientCommand(g), newKeysCommand(g), newUserCommand(g),
		newImportCommand(g), newCatalogCommand(g), newGiftCardsCommand(g),
		newRollupsCommand(g), newVersionCommand(g),
	)
	return root
}

// defaultAddr is serve's listen address unless told otherwise.
const defaultAddr = "127.0.0.1:8080"

// defaultPublicURL is the issuer of the commands that serve nothing
// (worker, user token) without --public-url: serve's own default, which
// follows FIDELIZA_ADDR, so a token minted with the environment serve runs
// with is accepted by it.
func defaultPublicURL() string {
	return "http://" + env("FIDELIZA_ADDR", defaultAddr)
}

func env(name, fallback string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return fallback
}

func (g *globals) logger() (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(g.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", g.logLevel)
	}
	return slog.New(tracing.LogHandler(slog.NewJSONHandler(g.stderr, &slog.HandlerOptions{Level: level}))), nil
}

// traced turns OpenTelemetry tracing on when the OTEL_* variables ask for
// it (docs/observability.md), before anything traced is built; stop
// flushes the spans not yet exported.
func traced(ctx context.Context, log *slog.Logger) (stop func(), err error) {
	shutdown, err := tracing.Setup(ctx)
	if err != nil {
		return nil, err
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := shutdown(ctx); err != nil {
			log.Warn("exporting the last spans failed", "err", err)
		}
	}, nil
}

// open opens, migrates and brings up the database and returns the
// application over it.
func (g *globals) open(ctx context.Context, log *slog.Logger, defaultIssuer string) (*app.App, error) {
	if g.oidc.Issuer != "" && g.oidc.Audience == "" {
		return nil, fmt.Errorf("--oidc-audience (FIDELIZA_OIDC_AUDIENCE) is required with --oidc-issuer")
	}
	createdKey, err := storage.UseDataKey(g.databaseURL, g.dataKeyFile)
	if err != nil {
		return nil, err
	}
	db, err := storage.Open(ctx, g.databaseURL)
	if err == nil {
		if g.migrated, err = db.Migrate(ctx, log); err != nil {
			db.Close()
			err = fmt.Errorf("migrating the database: %w", err)
		}
	}
	if err != nil {
		if createdKey != "" {
			os.Remove(createdKey) // a key made for a database that could not use it
		}
		return nil, err
	}
	if createdKey != "" {
		log.Warn("created the data key file the documents (CPF, CNPJ) and signing keys are sealed with: back it up apart from the database, for without it they cannot be read",
			"file", createdKey)
	}
	issuer := g.publicURL
	if issuer == "" {
		issuer = defaultIssuer
	}
	if !strings.HasPrefix(issuer, "http://") && !strings.HasPrefix(issuer, "https://") {
		db.Close()
		return nil, fmt.Errorf("--public-url %q must start with http:// or https://", issuer)
	}
	a := app.New(&app.Config{DB: db, Auth: auth.NewService(db.Ent, issuer, g.audience), Log: log}).WithHistory(demoyear.Play)
	if err := a.BringUp(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return a, nil
}

// useOIDC makes the server accept tokens of the configured external OpenID
// provider; only serve verifies tokens, so only serve asks the provider.
func (g *globals) useOIDC(ctx context.Context, log *slog.Logger, a *app.App) error {
	if g.oidc.Issuer == "" {
		return nil
	}
	if err := a.Auth.UseOIDC(ctx, g.oidc); err != nil {
		return fmt.Errorf("--oidc-issuer %q (FIDELIZA_OIDC_ISSUER): %w", g.oidc.Issuer, err)
	}
	log.Info("accepting tokens of an external OpenID provider", "issuer", g.oidc.Issuer, "audience", g.oidc.Audience)
	return nil
}

// print writes v as JSON with --json, else the human summary.
func (g *globals) print(v any, human string) error {
	if g.jsonOutput {
		enc := json.NewEncoder(g.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	_, err := fmt.Fprintln(g.stdout, human)
	return err
}
