-- 0048 (issue 52): customers ordered and compared by their purchases (the
-- sales processed and not returned or cancelled whole) and by the latest
-- one, counted on the customer's row as its lifetime value is; the latest
-- is also kept in whole seconds since 1970 (0 without one) for the order,
-- which then has no NULLs, the same columns as on SQLite. The existing rows
-- take what the purchases' rollup (0037) counts.
ALTER TABLE "customers" ADD COLUMN IF NOT EXISTS "sales_count" bigint NOT NULL DEFAULT 0;
ALTER TABLE "customers" ADD COLUMN IF NOT EXISTS "last_purchase_at" timestamptz NULL;
ALTER TABLE "customers" ADD COLUMN IF NOT EXISTS "last_purchase_unix" bigint NOT NULL DEFAULT 0;
UPDATE "customers" c SET "sales_count" = p."purchases", "last_purchase_at" = p."last_sold_at",
    "last_purchase_unix" = floor(extract(epoch FROM p."last_sold_at"))::bigint
  FROM (SELECT "tenant_id", "customer_id", sum("purchases") AS "purchases", max("last_sold_at") AS "last_sold_at"
    FROM "rollup_customer_stores" WHERE "purchases" > 0 GROUP BY "tenant_id", "customer_id") AS p
  WHERE c."tenant_id" = p."tenant_id" AND c."id" = p."customer_id";
CREATE INDEX IF NOT EXISTS "customer_tenant_id_sales_count_id" ON "customers" ("tenant_id", "sales_count", "id");
CREATE INDEX IF NOT EXISTS "customer_tenant_id_last_purchase_unix_id" ON "customers" ("tenant_id", "last_purchase_unix", "id");
