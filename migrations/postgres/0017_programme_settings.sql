-- 0017: the programme's time zone, pending period, level downgrade grace and
-- churn refit interval; customers' pending points and level grace; lots'
-- pending period.
ALTER TABLE "customers" ADD COLUMN "level_grace_since" timestamptz NULL, ADD COLUMN "points_pending" bigint NOT NULL DEFAULT 0;
ALTER TABLE "points_lots" ADD COLUMN "pending_until" timestamptz NULL;
CREATE INDEX "pointslot_pending_until" ON "points_lots" ("pending_until");
ALTER TABLE "tenants" ADD COLUMN "time_zone" character varying NOT NULL DEFAULT 'America/Sao_Paulo', ADD COLUMN "points_pending_days" bigint NOT NULL DEFAULT 0, ADD COLUMN "level_grace_days" bigint NOT NULL DEFAULT 0, ADD COLUMN "churn_refit_days" bigint NOT NULL DEFAULT 7;
-- The churn scoring replaces scores by ranges of customer ids within a tenant.
CREATE INDEX "customerscore_tenant_id_customer_id" ON "customer_scores" ("tenant_id", "customer_id");
