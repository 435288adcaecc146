-- 0008: a list's total must not grow with the tenant. Each tenant's customer
-- count is kept by statement-level triggers (one update per statement, not
-- per row, so bulk inserts stay cheap), so the unfiltered list total is read,
-- not counted. Substring search already uses the trigram indexes of 0002.
ALTER TABLE "tenants" ADD COLUMN "customer_count" bigint NOT NULL DEFAULT 0;
UPDATE "tenants" SET "customer_count" = (SELECT count(*) FROM "customers" WHERE "customers"."tenant_id" = "tenants"."id");
CREATE FUNCTION "fideliza_count_customers"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE "tenants" t SET "customer_count" = t."customer_count" + n.n
      FROM (SELECT "tenant_id", count(*) AS n FROM new_rows GROUP BY "tenant_id") n WHERE t."id" = n."tenant_id";
  ELSE
    UPDATE "tenants" t SET "customer_count" = t."customer_count" - o.n
      FROM (SELECT "tenant_id", count(*) AS n FROM old_rows GROUP BY "tenant_id") o WHERE t."id" = o."tenant_id";
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER "customers_count_insert" AFTER INSERT ON "customers" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "fideliza_count_customers"();
CREATE TRIGGER "customers_count_delete" AFTER DELETE ON "customers" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "fideliza_count_customers"();
