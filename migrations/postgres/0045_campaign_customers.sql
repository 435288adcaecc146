-- 0045 (issue 38): what each customer paid within the period of each
-- campaign with a holdout, for the campaign's lift: the sales registered
-- for the customer with sold_at in [starts_at, ends_at) that are not
-- cancelled, how many and their amount payable, in integer cents and the
-- rest in 10^-8 R$ as the other rollups (0027). A campaign's dates and
-- holdout are fixed at creation, so its rows are counted when it is created
-- and then kept by triggers in the statement that writes a sale; a rebuild
-- of the tenant's rollups counts them again. A customer with no such sale
-- has no row.
CREATE TABLE IF NOT EXISTS "rollup_campaign_customers" ("tenant_id" text NOT NULL, "campaign_id" text NOT NULL,
  "customer_id" text NOT NULL, "sales" bigint NOT NULL DEFAULT 0, "paid_cents" bigint NOT NULL DEFAULT 0,
  "paid_sub" bigint NOT NULL DEFAULT 0,
  PRIMARY KEY ("tenant_id", "campaign_id", "customer_id"));
-- The campaigns a sale counts for, found without reading the others.
CREATE INDEX IF NOT EXISTS "campaigns_holdout_period" ON "campaigns" ("tenant_id", "starts_at", "ends_at")
  WHERE "holdout_basis_points" > 0;

-- fideliza_campaign_customers_fill counts again the rows of a tenant's
-- campaigns with a holdout (of one of them, when campaign is not null).
CREATE OR REPLACE FUNCTION "fideliza_campaign_customers_fill"(tenant text, campaign text) RETURNS void LANGUAGE sql AS $$
  DELETE FROM "rollup_campaign_customers" WHERE "tenant_id" = tenant AND "campaign_id" = coalesce(campaign, "campaign_id");
  INSERT INTO "rollup_campaign_customers" ("tenant_id", "campaign_id", "customer_id", "sales", "paid_cents", "paid_sub")
    SELECT tenant, c."id", s."customer_id", count(*), sum(fideliza_cents(s."amount_payable")), sum(fideliza_sub(s."amount_payable"))
    FROM "campaigns" c JOIN "sales" s ON s."tenant_id" = tenant AND s."sold_at" >= c."starts_at" AND s."sold_at" < c."ends_at"
    WHERE c."tenant_id" = tenant AND c."id" = coalesce(campaign, c."id") AND c."holdout_basis_points" > 0
      AND s."customer_id" IS NOT NULL AND s."status" <> 'CANCELLED'
    GROUP BY 2, 3;
$$;
SELECT fideliza_campaign_customers_fill("id", NULL) FROM "tenants";

-- A sale that counts (a customer's, not cancelled) appears or goes: the
-- rows of the campaigns whose period holds it gain or lose it. Increments,
-- so concurrent sales all count.
CREATE OR REPLACE FUNCTION "fideliza_campaign_customers"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' AND OLD."customer_id" IS NOT NULL AND OLD."status" <> 'CANCELLED' THEN
    UPDATE "rollup_campaign_customers" r SET "sales" = r."sales" - 1,
        "paid_cents" = r."paid_cents" - fideliza_cents(OLD."amount_payable"), "paid_sub" = r."paid_sub" - fideliza_sub(OLD."amount_payable")
      FROM "campaigns" c WHERE c."tenant_id" = OLD."tenant_id" AND c."holdout_basis_points" > 0
        AND c."starts_at" <= OLD."sold_at" AND c."ends_at" > OLD."sold_at"
        AND r."tenant_id" = OLD."tenant_id" AND r."campaign_id" = c."id" AND r."customer_id" = OLD."customer_id";
    DELETE FROM "rollup_campaign_customers" r USING "campaigns" c WHERE c."tenant_id" = OLD."tenant_id" AND c."holdout_basis_points" > 0
        AND c."starts_at" <= OLD."sold_at" AND c."ends_at" > OLD."sold_at"
        AND r."tenant_id" = OLD."tenant_id" AND r."campaign_id" = c."id" AND r."customer_id" = OLD."customer_id" AND r."sales" <= 0;
  END IF;
  IF TG_OP <> 'DELETE' AND NEW."customer_id" IS NOT NULL AND NEW."status" <> 'CANCELLED' THEN
    INSERT INTO "rollup_campaign_customers" AS r ("tenant_id", "campaign_id", "customer_id", "sales", "paid_cents", "paid_sub")
      SELECT NEW."tenant_id", c."id", NEW."customer_id", 1, fideliza_cents(NEW."amount_payable"), fideliza_sub(NEW."amount_payable")
      FROM "campaigns" c WHERE c."tenant_id" = NEW."tenant_id" AND c."holdout_basis_points" > 0
        AND c."starts_at" <= NEW."sold_at" AND c."ends_at" > NEW."sold_at"
      ON CONFLICT ("tenant_id", "campaign_id", "customer_id") DO UPDATE SET "sales" = r."sales" + 1,
        "paid_cents" = r."paid_cents" + excluded."paid_cents", "paid_sub" = r."paid_sub" + excluded."paid_sub";
  END IF;
  RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER "campaign_customers_sale_insert" AFTER INSERT ON "sales" FOR EACH ROW
  WHEN (NEW."customer_id" IS NOT NULL AND NEW."status" <> 'CANCELLED')
  EXECUTE FUNCTION "fideliza_campaign_customers"();
CREATE OR REPLACE TRIGGER "campaign_customers_sale_update" AFTER UPDATE OF "status", "customer_id", "sold_at", "amount_payable" ON "sales" FOR EACH ROW
  WHEN ((OLD."status" = 'CANCELLED') IS DISTINCT FROM (NEW."status" = 'CANCELLED')
    OR (OLD."customer_id", OLD."sold_at", OLD."amount_payable") IS DISTINCT FROM (NEW."customer_id", NEW."sold_at", NEW."amount_payable"))
  EXECUTE FUNCTION "fideliza_campaign_customers"();
CREATE OR REPLACE TRIGGER "campaign_customers_sale_delete" AFTER DELETE ON "sales" FOR EACH ROW
  WHEN (OLD."customer_id" IS NOT NULL AND OLD."status" <> 'CANCELLED')
  EXECUTE FUNCTION "fideliza_campaign_customers"();

-- A campaign with a holdout is counted from the sales of its period when
-- it is created (or its period or holdout change), and its rows go with it.
CREATE OR REPLACE FUNCTION "fideliza_campaign_customers_campaign"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM "rollup_campaign_customers" WHERE "tenant_id" = OLD."tenant_id" AND "campaign_id" = OLD."id";
    RETURN NULL;
  END IF;
  PERFORM fideliza_campaign_customers_fill(NEW."tenant_id", NEW."id");
  RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER "campaign_customers_campaign_insert" AFTER INSERT ON "campaigns" FOR EACH ROW
  WHEN (NEW."holdout_basis_points" > 0)
  EXECUTE FUNCTION "fideliza_campaign_customers_campaign"();
CREATE OR REPLACE TRIGGER "campaign_customers_campaign_update" AFTER UPDATE OF "starts_at", "ends_at", "holdout_basis_points" ON "campaigns" FOR EACH ROW
  WHEN ((OLD."starts_at", OLD."ends_at", OLD."holdout_basis_points" > 0) IS DISTINCT FROM (NEW."starts_at", NEW."ends_at", NEW."holdout_basis_points" > 0))
  EXECUTE FUNCTION "fideliza_campaign_customers_campaign"();
CREATE OR REPLACE TRIGGER "campaign_customers_campaign_delete" AFTER DELETE ON "campaigns" FOR EACH ROW
  WHEN (OLD."holdout_basis_points" > 0)
  EXECUTE FUNCTION "fideliza_campaign_customers_campaign"();

-- A rebuild of the tenant's rollups counts these again too.
CREATE OR REPLACE FUNCTION "fideliza_campaign_customers_rebuild"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM fideliza_campaign_customers_fill(NEW."tenant_id", NULL);
  RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER "rollup_rebuild_campaign_customers" AFTER INSERT ON "rollup_rebuilds" FOR EACH ROW
  EXECUTE FUNCTION "fideliza_campaign_customers_rebuild"();
