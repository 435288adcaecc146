-- 0037 (issue 37, audiences' preview): each customer's processed sales (a
-- sale returned or cancelled whole is no purchase) by store, their count and
-- the latest sold_at, kept by triggers in the statement that writes a sale,
-- as the dashboards' rollups are (0027), so that the facts of a rule over
-- purchases are one row per customer and store rather than a scan of sales.
CREATE TABLE IF NOT EXISTS "rollup_customer_stores" ("tenant_id" text NOT NULL, "customer_id" text NOT NULL,
  "store_id" text NOT NULL, "purchases" bigint NOT NULL DEFAULT 0, "last_sold_at" timestamptz NULL,
  PRIMARY KEY ("tenant_id", "customer_id", "store_id"));
INSERT INTO "rollup_customer_stores" ("tenant_id", "customer_id", "store_id", "purchases", "last_sold_at")
  SELECT "tenant_id", "customer_id", "store_id", count(*), max("sold_at") FROM "sales"
  WHERE "customer_id" IS NOT NULL AND "status" IN ('PROCESSED', 'PARTIALLY_RETURNED')
  GROUP BY "tenant_id", "customer_id", "store_id"
  ON CONFLICT DO NOTHING;
-- A purchase that appears adds one and may be the latest; one that goes
-- (returned or cancelled whole, moved, deleted) takes one off and, when it
-- was the latest, the latest is read again from the customer's sales there.
-- Counts move by increments, so two transactions adding purchases of one
-- customer at once both count.
CREATE OR REPLACE FUNCTION "fideliza_customer_stores"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' AND OLD."customer_id" IS NOT NULL AND OLD."status" IN ('PROCESSED', 'PARTIALLY_RETURNED') THEN
    UPDATE "rollup_customer_stores" SET "purchases" = "purchases" - 1
      WHERE "tenant_id" = OLD."tenant_id" AND "customer_id" = OLD."customer_id" AND "store_id" = OLD."store_id";
  END IF;
  IF TG_OP <> 'DELETE' AND NEW."customer_id" IS NOT NULL AND NEW."status" IN ('PROCESSED', 'PARTIALLY_RETURNED') THEN
    INSERT INTO "rollup_customer_stores" AS r ("tenant_id", "customer_id", "store_id", "purchases", "last_sold_at")
      VALUES (NEW."tenant_id", NEW."customer_id", NEW."store_id", 1, NEW."sold_at")
      ON CONFLICT ("tenant_id", "customer_id", "store_id") DO UPDATE SET "purchases" = r."purchases" + 1,
        "last_sold_at" = greatest(r."last_sold_at", excluded."last_sold_at");
  END IF;
  IF TG_OP <> 'INSERT' AND OLD."customer_id" IS NOT NULL AND OLD."status" IN ('PROCESSED', 'PARTIALLY_RETURNED') THEN
    DELETE FROM "rollup_customer_stores"
      WHERE "tenant_id" = OLD."tenant_id" AND "customer_id" = OLD."customer_id" AND "store_id" = OLD."store_id" AND "purchases" <= 0;
    UPDATE "rollup_customer_stores" r SET "last_sold_at" = (SELECT max(s."sold_at") FROM "sales" s
        WHERE s."tenant_id" = OLD."tenant_id" AND s."customer_id" = OLD."customer_id" AND s."store_id" = OLD."store_id"
          AND s."status" IN ('PROCESSED', 'PARTIALLY_RETURNED'))
      WHERE r."tenant_id" = OLD."tenant_id" AND r."customer_id" = OLD."customer_id" AND r."store_id" = OLD."store_id"
        AND r."last_sold_at" <= OLD."sold_at";
  END IF;
  RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER "customer_store_sale_insert" AFTER INSERT ON "sales" FOR EACH ROW
  WHEN (NEW."customer_id" IS NOT NULL AND NEW."status" IN ('PROCESSED', 'PARTIALLY_RETURNED'))
  EXECUTE FUNCTION "fideliza_customer_stores"();
CREATE OR REPLACE TRIGGER "customer_store_sale_update" AFTER UPDATE OF "status", "customer_id", "store_id", "sold_at" ON "sales" FOR EACH ROW
  WHEN ((OLD."customer_id" IS NOT NULL AND OLD."status" IN ('PROCESSED', 'PARTIALLY_RETURNED'))
      IS DISTINCT FROM (NEW."customer_id" IS NOT NULL AND NEW."status" IN ('PROCESSED', 'PARTIALLY_RETURNED'))
    OR (OLD."customer_id", OLD."store_id", OLD."sold_at") IS DISTINCT FROM (NEW."customer_id", NEW."store_id", NEW."sold_at"))
  EXECUTE FUNCTION "fideliza_customer_stores"();
CREATE OR REPLACE TRIGGER "customer_store_sale_delete" AFTER DELETE ON "sales" FOR EACH ROW
  WHEN (OLD."customer_id" IS NOT NULL AND OLD."status" IN ('PROCESSED', 'PARTIALLY_RETURNED'))
  EXECUTE FUNCTION "fideliza_customer_stores"();
