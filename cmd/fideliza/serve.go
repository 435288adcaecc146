package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fideliza/fideliza/app"
	"github.com/fideliza/fideliza/app/customers"
	"github.com/fideliza/fideliza/domain/webhook"
	"github.com/fideliza/fideliza/jobs"
	"github.com/fideliza/fideliza/metrics"
	"github.com/fideliza/fideliza/ratelimit"
	"github.com/fideliza/fideliza/rest"
	"github.com/fideliza/fideliza/storage"
	"github.com/fideliza/fideliza/tracing"
	"github.com/fideliza/fideliza/worker"
)

const shutdownGrace = 15 * time.Second

func newServeCommand(g *globals) *cobra.Command {
	var (
		addr     string
		demo     bool
		noWorker bool
		workers  int
		points   time.Duration
		rescue   time.Duration
		intro    bool
		limits   rateLimitFlags
		office   backofficeFlags
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve REST, GraphQL and the River workers; migrates the database first",
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			log, err := g.logger()
			if err != nil {
				return err
			}
			stop, err := traced(ctx, log)
			if err != nil {
				return err
			}
			defer stop()
			if _, _, err := net.SplitHostPort(addr); err != nil {
				return fmt.Errorf("--addr %q: want host:port, such as 127.0.0.1:8080", addr)
			}
			rates, err := limits.config()
			if err != nil {
				return err
			}
			lookups, err := limits.documentLookupQuota()
			if err != nil {
				return err
			}
			origins, err := office.origins()
			if err != nil {
				return err
			}
			trusted, err := office.trustedDocuments()
			if err != nil {
				return err
			}
			// The address is taken before the migrations and the demo's
			// history: a busy port fails at once, and nothing else can take
			// it while they run (requests wait in the listen backlog).
			listener, err := listen(addr, "--addr", "FIDELIZA_ADDR")
			if err != nil {
				return err
			}
			defer listener.Close()
			a, err := g.open(ctx, log, "http://"+addr)
			if err != nil {
				return err
			}
			defer a.DB.Close()
			a.DocumentLookups = lookups
			// The external provider is asked before the start is logged: a
			// provider that cannot be discovered refuses the start.
			if err := g.useOIDC(ctx, log, a); err != nil {
				return err
			}
			go a.DB.KeepOptimized(ctx, log)
			g.logStart(log, a, "serve", "addr", addr, "worker", !noWorker, "workers", workers, "points_interval", points.String(),
				"rescue_after", rescue.String(), "demo", demo, "graphql_introspection", intro, "tracing", tracing.Enabled(),
				"graphql_trusted_documents", trusted.Len(), // 0: any document runs
				// Rate limits are counted by this process alone.
				"rate_limit_client", rates.DefaultQuota().String(), "rate_limit_tenant_overrides", len(rates.Tenants),
				"rate_limit_token_per_ip", rates.TokenQuota().String(), "rate_limit_auth_failures_per_ip", rates.AuthFailureQuota().String(),
				"rate_limit_document_lookups", lookups.String())
			a.WebhookGuard = webhook.Guard{AllowLoopback: g.webhookLoopback}
			// One registry for the HTTP side and the jobs this process works:
			// GET /metrics serves both.
			reg := metrics.New()
			a.Counts = reg
			client, err := worker.NewClient(a, worker.Config{Work: !noWorker, MaxWorkers: workers,
				PointsInterval: points, RescueAfter: rescue, Metrics: reg})
			if err != nil {
				return err
			}
			var creds *app.DemoCredentials
			if demo {
				if creds, err = a.LoadDemo(ctx); err != nil {
					return fmt.Errorf("loading demo data: %w", err)
				}
			}
			if err := storeCampaignStatuses(ctx, a); err != nil {
				return err
			}
			if demo {
				if err := printDemo(ctx, g, a, creds); err != nil {
					return err
				}
			}
			return run(ctx, log, client, !noWorker, &http.Server{
				Handler: rest.NewHandler(a, log, rest.Config{NoIntrospection: !intro, RateLimits: rates, Metrics: reg,
					CORSOrigins: origins, TrustedDocuments: trusted}),
				ReadHeaderTimeout: 10 * time.Second,
				IdleTimeout:       2 * time.Minute,
			}, listener)
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", env("FIDELIZA_ADDR", defaultAddr), "listen address (env FIDELIZA_ADDR)")
	f.BoolVar(&demo, "demo", false, "load the demo tenant and print its credentials and example calls")
	f.BoolVar(&noWorker, "no-worker", false, "serve HTTP only; jobs are worked by `fideliza worker` processes")
	f.IntVar(&workers, "workers", envInt("FIDELIZA_WORKERS", 20), "concurrent River jobs of each queue; the sales queue has at least 128 (env FIDELIZA_WORKERS)")
	pointsIntervalFlag(f, &points)
	rescueAfterFlag(f, &rescue)
	f.BoolVar(&intro, "graphql-introspection", envBool("FIDELIZA_GRAPHQL_INTROSPECTION", true),
		"answer GraphQL introspection (the playground's schema and docs need it) (env FIDELIZA_GRAPHQL_INTROSPECTION)")
	limits.register(f)
	office.register(f)
	return cmd
}

// rateLimitFlags are the request quotas of serve, as given.
type rateLimitFlags struct {
	client, token, authFailures, documentLookups string
	tenants                                      []string
}

func (l *rateLimitFlags) register(f *pflag.FlagSet) {
	f.StringVar(&l.client, "rate-limit", env("FIDELIZA_RATE_LIMIT", ratelimit.DefaultQuota.String()),
		"requests each client (OAuth, POS, back-office user) may make per window, <requests>/<window> or off (env FIDELIZA_RATE_LIMIT)")
	var tenants []string
	if v := env("FIDELIZA_RATE_LIMIT_TENANTS", ""); v != "" {
		tenants = []string{v}
	}
	f.StringArrayVar(&l.tenants, "rate-limit-tenant", tenants,
		"<tenant-uuid>=<requests>/<window>: the quota of each client of that tenant instead of --rate-limit; repeatable (env FIDELIZA_RATE_LIMIT_TENANTS, comma-separated)")
	f.StringVar(&l.token, "rate-limit-token", env("FIDELIZA_RATE_LIMIT_TOKEN", ratelimit.DefaultTokenQuota.String()),
		"requests to /auth/token per IP address (env FIDELIZA_RATE_LIMIT_TOKEN)")
	f.StringVar(&l.authFailures, "rate-limit-auth-failures", env("FIDELIZA_RATE_LIMIT_AUTH_FAILURES", ratelimit.DefaultAuthFailureQuota.String()),
		"failed HTTP Basic authentications of the point-of-sale interface per IP address; over it the address is refused before its credentials are checked (env FIDELIZA_RATE_LIMIT_AUTH_FAILURES)")
	f.StringVar(&l.documentLookups, "rate-limit-document-lookups", env("FIDELIZA_RATE_LIMIT_DOCUMENT_LOOKUPS", customers.DefaultDocumentLookups.String()),
		"customers each client may look up by complete CPF or CNPJ per window (GET /v1/customers?search=<CPF>, GraphQL customerByDocument), counted by each process (env FIDELIZA_RATE_LIMIT_DOCUMENT_LOOKUPS)")
}

// documentLookupQuota reads --rate-limit-document-lookups.
func (l *rateLimitFlags) documentLookupQuota() (ratelimit.Quota, error) {
	q, err := ratelimit.ParseQuota(l.documentLookups)
	if err != nil {
		return q, fmt.Errorf("--rate-limit-document-lookups (FIDELIZA_RATE_LIMIT_DOCUMENT_LOOKUPS): %w", err)
	}
	return q, nil
}

// config reads the flags; a bad value names its flag and variable.
func (l *rateLimitFlags) config() (ratelimit.Config, error) {
	var c ratelimit.Config
	for _, q := range []struct {
		flag, envName, value string
		into                 *ratelimit.Quota
	}{
		{"--rate-limit", "FIDELIZA_RATE_LIMIT", l.client, &c.Default},
		{"--rate-limit-token", "FIDELIZA_RATE_LIMIT_TOKEN", l.token, &c.Token},
		{"--rate-limit-auth-failures", "FIDELIZA_RATE_LIMIT_AUTH_FAILURES", l.authFailures, &c.AuthFailures},
	} {
		v, err := ratelimit.ParseQuota(q.value)
		if err != nil {
			return c, fmt.Errorf("%s (%s): %w", q.flag, q.envName, err)
		}
		*q.into = v
	}
	tenants, err := ratelimit.ParseTenantQuotas(l.tenants)
	if err != nil {
		return c, fmt.Errorf("--rate-limit-tenant (FIDELIZA_RATE_LIMIT_TENANTS): %w", err)
	}
	c.Tenants = tenants
	return c, nil
}

// pointsIntervalFlag is how often points expire and are released and
// levels are recomputed.
func pointsIntervalFlag(f *pflag.FlagSet, d *time.Duration) {
	durationFlag(f, d, "points-interval", "FIDELIZA_POINTS_INTERVAL", time.Hour,
		"how often points expire and are released and levels are recomputed")
}

// rescueAfterFlag is how long a job may run before another worker takes it
// over from a process that died.
func rescueAfterFlag(f *pflag.FlagSet, d *time.Duration) {
	durationFlag(f, d, "rescue-after", "FIDELIZA_RESCUE_AFTER", worker.DefaultRescueAfter,
		"how long a short job (a sale, a cashback) may run before another worker retries it (its process died); they time out at two thirds of it")
}

func durationFlag(f *pflag.FlagSet, d *time.Duration, name, envName string, def time.Duration, usage string) {
	if v, err := time.ParseDuration(env(envName, "")); err == nil && v > 0 {
		def = v
	}
	f.DurationVar(d, name, def, usage+" (env "+envName+")")
}

func newWorkerCommand(g *globals) *cobra.Command {
	var (
		workers     int
		points      time.Duration
		rescue      time.Duration
		metricsAddr string
	)
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Work River jobs only (scale-out); migrates the database first",
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			log, err := g.logger()
			if err != nil {
				return err
			}
			stop, err := traced(ctx, log)
			if err != nil {
				return err
			}
			defer stop()
			a, err := g.open(ctx, log, defaultPublicURL())
			if err != nil {
				return err
			}
			defer a.DB.Close()
			a.WebhookGuard = webhook.Guard{AllowLoopback: g.webhookLoopback}
			g.logStart(log, a, "worker", "tracing", tracing.Enabled(), "workers", workers, "points_interval", points.String(), "rescue_after", rescue.String(),
				"metrics_addr", metricsAddr)
			var reg *metrics.Registry
			if metricsAddr != "" {
				reg = metrics.New()
				reg.WatchQueue(a.DB.Reads)
				a.Counts = reg
			}
			client, err := worker.NewClient(a, worker.Config{Work: true, MaxWorkers: workers,
				PointsInterval: points, RescueAfter: rescue, Metrics: reg})
			if err != nil {
				return err
			}
			if err := storeCampaignStatuses(ctx, a); err != nil {
				return err
			}
			if metricsAddr == "" {
				return run(ctx, log, client, true, nil, nil)
			}
			listener, err := listen(metricsAddr, "--metrics-addr", "FIDELIZA_METRICS_ADDR")
			if err != nil {
				return err
			}
			return run(ctx, log, client, true, &http.Server{Handler: workerHandler(reg, log),
				ReadHeaderTimeout: 10 * time.Second}, listener)
		},
	}
	cmd.Flags().IntVar(&workers, "workers", envInt("FIDELIZA_WORKERS", 20), "concurrent River jobs of each queue; the sales queue has at least 128 (env FIDELIZA_WORKERS)")
	cmd.Flags().StringVar(&metricsAddr, "metrics-addr", env("FIDELIZA_METRICS_ADDR", ""),
		"serve GET /metrics and /healthz on this address; empty: none (env FIDELIZA_METRICS_ADDR)")
	pointsIntervalFlag(cmd.Flags(), &points)
	rescueAfterFlag(cmd.Flags(), &rescue)
	return cmd
}

// listen takes the address of a flag; the error of an address it cannot
// take names the flag and its variable.
func listen(addr, flag, envName string) (net.Listener, error) {
	l, err := net.Listen("tcp", addr)
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return nil, fmt.Errorf("%s %s (%s): the address is in use by another process: stop it or choose another address: %w",
			flag, addr, envName, err)
	case err != nil:
		return nil, fmt.Errorf("%s %s (%s): %w", flag, addr, envName, err)
	}
	return l, nil
}

// workerHandler is what a worker serves on --metrics-addr: its metrics (the
// jobs it works and the queue) and its liveness.
func workerHandler(reg *metrics.Registry, log *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", reg.Handler(log))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"ok"}`+"\n")
	})
	return mux
}

// storeCampaignStatuses brings the stored campaign statuses up to their
// dates before a process serves or works anything: the periodic job that
// does it runs a minute after start, and until then GraphQL's status
// filters, which read the stored status, would find a campaign that ended
// while no process ran among the active ones.
func storeCampaignStatuses(ctx context.Context, a *app.App) error {
	if err := a.Campaigns.RunCampaignLifecycle(ctx, jobs.CampaignLifecycle{}); err != nil {
		return fmt.Errorf("bringing campaign statuses up to date: %w", err)
	}
	return nil
}

// logStart writes the one INFO line of a start: the command and its
// effective configuration, never a secret (the database is named by its
// dialect only: its URL may hold a password).
func (g *globals) logStart(log *slog.Logger, a *app.App, command string, attrs ...any) {
	b := readBuildInfo()
	log.Info("starting", append([]any{"command", command, "version", b.Version, "revision", b.Revision,
		"database", a.DB.Dialect, "log_level", g.logLevel,
		"public_url", g.publicURL, "oidc_issuer", g.oidc.Issuer, "webhook_loopback", g.webhookLoopback}, attrs...)...)
	if key, beside := storage.DataKeyBeside(g.databaseURL, g.dataKeyFile); beside {
		log.Warn("the data key file is in the database's directory: a copy of that directory unseals the CPFs, CNPJs and "+
			"signing keys (and so can sign tokens); keep the key elsewhere and name it with --data-key-file", "file", key)
	}
}

func envBool(name string, fallback bool) bool {
	if b, err := strconv.ParseBool(env(name, "")); err == nil {
		return b
	}
	return fallback
}

func envInt(name string, fallback int) int {
	if n, err := strconv.Atoi(env(name, "")); err == nil {
		return n
	}
	return fallback
}

// run serves HTTP (when srv is set) and works jobs (when work is set) until
// ctx ends, then drains both: HTTP requests finish, running jobs get the
// grace period before they are cancelled.
func run(ctx context.Context, log *slog.Logger, rc worker.Client, work bool, srv *http.Server, l net.Listener) error {
	if work {
		if err := rc.Start(ctx); err != nil {
			return fmt.Errorf("starting River: %w", err)
		}
		log.Info("worker started")
	}
	errc := make(chan error, 1)
	if srv != nil {
		go func() { errc <- srv.Serve(l) }()
		log.Info("listening", "addr", l.Addr().String())
	}
	select {
	case <-ctx.Done():
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	}
	log.Info("shutting down")
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	var errs []error
	if srv != nil {
		errs = append(errs, srv.Shutdown(stopCtx))
	}
	if work {
		if err := rc.Stop(stopCtx); err != nil {
			errs = append(errs, rc.StopAndCancel(context.WithoutCancel(ctx)))
		}
	}
	log.Info("stopped")
	return errors.Join(errs...)
}
