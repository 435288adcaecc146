-- 0033 (issue 36): points spent as money at the till and at checkout: the
-- programme's rules on the tenant, the holds that reserve points, and the
-- hold a sale's POINTS payment spends.
ALTER TABLE "tenants" ADD COLUMN IF NOT EXISTS "points_value" numeric(20,8) NULL, ADD COLUMN IF NOT EXISTS "points_spend_min" bigint NOT NULL DEFAULT 0, ADD COLUMN IF NOT EXISTS "points_spend_max_share" numeric(20,8) NULL, ADD COLUMN IF NOT EXISTS "points_spend_channels" jsonb NULL;
ALTER TABLE "sale_payments" ADD COLUMN IF NOT EXISTS "hold_id" character varying NULL;
CREATE TABLE IF NOT EXISTS "points_holds" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "channel" character varying NOT NULL, "session" character varying NOT NULL, "store_code" character varying NOT NULL DEFAULT '', "points" bigint NOT NULL, "amount" numeric(20,8) NOT NULL, "status" character varying NOT NULL DEFAULT 'open', "expires_at" timestamptz NOT NULL, "sale_id" character varying NULL, "order_id" character varying NULL, "closed_at" timestamptz NULL, "tenant_id" character varying NOT NULL, "customer_id" character varying NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "points_holds_tenants_tenant" FOREIGN KEY ("tenant_id") REFERENCES "tenants" ("id") ON DELETE NO ACTION, CONSTRAINT "points_holds_customers_customer" FOREIGN KEY ("customer_id") REFERENCES "customers" ("id") ON DELETE NO ACTION);
CREATE UNIQUE INDEX IF NOT EXISTS "pointshold_tenant_id_session" ON "points_holds" ("tenant_id", "session");
CREATE INDEX IF NOT EXISTS "pointshold_tenant_id_customer_id_status" ON "points_holds" ("tenant_id", "customer_id", "status");
CREATE INDEX IF NOT EXISTS "pointshold_status_expires_at" ON "points_holds" ("status", "expires_at");
