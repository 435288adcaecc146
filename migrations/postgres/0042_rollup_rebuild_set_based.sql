-- 0042 (issue 38): a rebuild of a tenant's rollups (the rebuild command, a
-- time zone change) counts the pairs of the customers' active days
-- set-based, from the days it has just counted, instead of through the
-- days' row triggers one day at a time: at 10 million sales those triggers
-- took most of a rebuild (several minutes for a million sales on the
-- 2-core machine). The days' triggers stand aside while the tenant's
-- rollup_rebuilds row exists, which is for the rebuild's length. Same rows
-- as before (TestRollupsMatchRows).
CREATE OR REPLACE FUNCTION "fideliza_rollup_active_pairs"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  r "rollup_customer_days";
  prev text;
  next text;
BEGIN
  -- A rebuild of the tenant counts its pairs itself, set-based.
  IF EXISTS (SELECT 1 FROM "rollup_rebuilds" b WHERE b."tenant_id" = coalesce(NEW."tenant_id", OLD."tenant_id")) THEN
    RETURN coalesce(NEW, OLD);
  END IF;
  IF TG_OP = 'INSERT' THEN
    r := NEW;
    IF r."events" <= 0 OR EXISTS (SELECT 1 FROM "rollup_customer_days" c
        WHERE c."tenant_id" = r."tenant_id" AND c."customer_id" = r."customer_id" AND c."day" = r."day") THEN
      RETURN NEW;
    END IF;
  ELSE
    r := OLD;
  END IF;
  SELECT coalesce(max(c."day"), '') INTO prev FROM "rollup_customer_days" c
    WHERE c."tenant_id" = r."tenant_id" AND c."customer_id" = r."customer_id" AND c."day" < r."day";
  SELECT min(c."day") INTO next FROM "rollup_customer_days" c
    WHERE c."tenant_id" = r."tenant_id" AND c."customer_id" = r."customer_id" AND c."day" > r."day";
  IF TG_OP = 'INSERT' THEN
    INSERT INTO "rollup_active_pairs" AS p ("tenant_id", "day", "prev_day", "customers") VALUES (r."tenant_id", r."day", prev, 1)
      ON CONFLICT ("tenant_id", "day", "prev_day") DO UPDATE SET "customers" = p."customers" + 1;
    IF next IS NOT NULL THEN
      UPDATE "rollup_active_pairs" SET "customers" = "customers" - 1
        WHERE "tenant_id" = r."tenant_id" AND "day" = next AND "prev_day" = prev;
      INSERT INTO "rollup_active_pairs" AS p ("tenant_id", "day", "prev_day", "customers") VALUES (r."tenant_id", next, r."day", 1)
        ON CONFLICT ("tenant_id", "day", "prev_day") DO UPDATE SET "customers" = p."customers" + 1;
    END IF;
    RETURN NEW;
  END IF;
  UPDATE "rollup_active_pairs" SET "customers" = "customers" - 1
    WHERE "tenant_id" = r."tenant_id" AND "day" = r."day" AND "prev_day" = prev;
  IF next IS NOT NULL THEN
    UPDATE "rollup_active_pairs" SET "customers" = "customers" - 1
      WHERE "tenant_id" = r."tenant_id" AND "day" = next AND "prev_day" = r."day";
    INSERT INTO "rollup_active_pairs" AS p ("tenant_id", "day", "prev_day", "customers") VALUES (r."tenant_id", next, prev, 1)
      ON CONFLICT ("tenant_id", "day", "prev_day") DO UPDATE SET "customers" = p."customers" + 1;
  END IF;
  RETURN OLD;
END $$;
CREATE OR REPLACE FUNCTION "fideliza_rollup_rebuild"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM "rollup_sales_days" WHERE "tenant_id" = NEW."tenant_id";
  DELETE FROM "rollup_campaign_days" WHERE "tenant_id" = NEW."tenant_id";
  DELETE FROM "rollup_points_days" WHERE "tenant_id" = NEW."tenant_id";
  DELETE FROM "rollup_customer_days" WHERE "tenant_id" = NEW."tenant_id";
  DELETE FROM "rollup_active_pairs" WHERE "tenant_id" = NEW."tenant_id";
  INSERT INTO "rollup_sales_days" ("tenant_id", "day", "store_id", "sales", "amount_cents", "amount_sub",
      "discount_cents", "discount_sub", "payable_cents", "payable_sub", "returned_cents", "returned_sub",
      "points_credited", "points_reversed", "cancelled")
    SELECT s."tenant_id", fideliza_day(s."sold_at", t."time_zone") AS "day", s."store_id", count(*),
      sum(fideliza_cents(s."amount")), sum(fideliza_sub(s."amount")), sum(fideliza_cents(s."discount_amount")), sum(fideliza_sub(s."discount_amount")),
      sum(fideliza_cents(s."amount_payable")), sum(fideliza_sub(s."amount_payable")),
      sum(fideliza_cents(s."returned_amount")), sum(fideliza_sub(s."returned_amount")),
      sum(s."points_credited"), sum(s."points_reversed"), count(*) FILTER (WHERE s."status" = 'CANCELLED')
    FROM "sales" s JOIN "tenants" t ON t."id" = s."tenant_id" WHERE s."tenant_id" = NEW."tenant_id" GROUP BY 1, 2, 3;
  INSERT INTO "rollup_campaign_days" ("tenant_id", "campaign_id", "day", "redemptions", "discount_cents", "discount_sub",
      "cashback_cents", "cashback_sub", "paid_cents", "paid_sub", "rolled_back")
    SELECT r."tenant_id", r."campaign_id", fideliza_day(r."created_at", t."time_zone") AS "day", count(*),
      sum(fideliza_cents(r."discount_amount")), sum(fideliza_sub(r."discount_amount")),
      sum(fideliza_cents(r."cashback_amount")), sum(fideliza_sub(r."cashback_amount")),
      sum(fideliza_cents(r."amount_paid")), sum(fideliza_sub(r."amount_paid")), count(*) FILTER (WHERE r."rolled_back_at" IS NOT NULL)
    FROM "redemptions" r JOIN "tenants" t ON t."id" = r."tenant_id" WHERE r."tenant_id" = NEW."tenant_id" GROUP BY 1, 2, 3;
  INSERT INTO "rollup_points_days" ("tenant_id", "day", "credited", "bonus", "debited", "expired", "adjusted", "reversed", "net")
    SELECT e."tenant_id", fideliza_day(e."created_at", t."time_zone") AS "day",
      coalesce(sum(e."points") FILTER (WHERE e."kind" = 'credit'), 0), coalesce(sum(e."points") FILTER (WHERE e."kind" = 'bonus'), 0),
      coalesce(sum(e."points") FILTER (WHERE e."kind" = 'debit'), 0), coalesce(sum(e."points") FILTER (WHERE e."kind" = 'expiration'), 0),
      coalesce(sum(e."points") FILTER (WHERE e."kind" = 'adjustment'), 0), coalesce(sum(e."points") FILTER (WHERE e."kind" = 'reversal'), 0),
      sum(e."points")
    FROM "points_entries" e JOIN "tenants" t ON t."id" = e."tenant_id" WHERE e."tenant_id" = NEW."tenant_id" GROUP BY 1, 2;
  INSERT INTO "rollup_customer_days" ("tenant_id", "customer_id", "day", "events")
    SELECT NEW."tenant_id", a."customer_id", fideliza_day(a."at", t."time_zone") AS "day", count(*)
    FROM (SELECT "customer_id", "sold_at" AS "at" FROM "sales" WHERE "tenant_id" = NEW."tenant_id" AND "customer_id" IS NOT NULL
      UNION ALL SELECT "customer_id", "created_at" FROM "redemptions" WHERE "tenant_id" = NEW."tenant_id"
      UNION ALL SELECT "customer_id", "created_at" FROM "points_entries" WHERE "tenant_id" = NEW."tenant_id" AND "kind" IN ('credit', 'bonus', 'debit')) a
    JOIN "tenants" t ON t."id" = NEW."tenant_id" GROUP BY 1, 2, 3;
  INSERT INTO "rollup_active_pairs" ("tenant_id", "day", "prev_day", "customers")
    SELECT NEW."tenant_id", p."day", p."prev_day", count(*)
    FROM (SELECT c."day", coalesce(lag(c."day") OVER (PARTITION BY c."customer_id" ORDER BY c."day"), '') AS "prev_day"
      FROM "rollup_customer_days" c WHERE c."tenant_id" = NEW."tenant_id") p GROUP BY 1, 2, 3;
  DELETE FROM "rollup_rebuilds" WHERE "tenant_id" = NEW."tenant_id";
  RETURN NULL;
END $$;
