-- 0047 (issue 52): customers ordered and compared by lifetime value, by
-- its cents (rounded half away from zero, as the application keeps them),
-- the same column as on SQLite, where the decimal is text.
ALTER TABLE "customers" ADD COLUMN IF NOT EXISTS "lifetime_value_cents" bigint NOT NULL DEFAULT 0;
UPDATE "customers" SET "lifetime_value_cents" = ROUND("lifetime_value" * 100)::bigint
  WHERE "lifetime_value" <> 0;
CREATE INDEX IF NOT EXISTS "customer_tenant_id_lifetime_value_cents_id" ON "customers" ("tenant_id", "lifetime_value_cents", "id");
