-- 0027 (issue 38): the dashboards read rollups, not every sale of the
-- period. Per tenant and local day (the tenant's time zone): sales per
-- store, redemptions per campaign, ledger movements per kind, and each
-- customer's active days. Money is integer cents plus the part below the
-- cent in 10^-8 R$ (the scale of the decimal columns), so sums stay exact
-- and fit 64 bits; points are integers. Statement-level triggers keep them
-- in the statement that changes the rows they summarise (one upsert per
-- store and day a statement touches, so bulk inserts stay cheap), so they
-- are exactly once with them whatever writes the rows.
CREATE OR REPLACE FUNCTION "fideliza_day"(timestamptz, text) RETURNS text LANGUAGE sql STABLE STRICT
  AS $$ SELECT to_char($1 AT TIME ZONE $2, 'YYYY-MM-DD') $$;
CREATE OR REPLACE FUNCTION "fideliza_cents"(numeric) RETURNS bigint LANGUAGE sql IMMUTABLE STRICT
  AS $$ SELECT trunc($1 * 100)::bigint $$;
CREATE OR REPLACE FUNCTION "fideliza_sub"(numeric) RETURNS bigint LANGUAGE sql IMMUTABLE STRICT
  AS $$ SELECT (($1 * 100 - trunc($1 * 100)) * 1000000)::bigint $$;
CREATE TABLE IF NOT EXISTS "rollup_sales_days" ("tenant_id" text NOT NULL, "day" text COLLATE "C" NOT NULL, "store_id" text NOT NULL,
  "sales" bigint NOT NULL DEFAULT 0, "amount_cents" bigint NOT NULL DEFAULT 0, "amount_sub" bigint NOT NULL DEFAULT 0, "discount_cents" bigint NOT NULL DEFAULT 0, "discount_sub" bigint NOT NULL DEFAULT 0,
  "payable_cents" bigint NOT NULL DEFAULT 0, "payable_sub" bigint NOT NULL DEFAULT 0, "returned_cents" bigint NOT NULL DEFAULT 0, "returned_sub" bigint NOT NULL DEFAULT 0,
  "points_credited" bigint NOT NULL DEFAULT 0, "points_reversed" bigint NOT NULL DEFAULT 0,
  "cancelled" bigint NOT NULL DEFAULT 0,
  PRIMARY KEY ("tenant_id", "day", "store_id"));
CREATE TABLE IF NOT EXISTS "rollup_campaign_days" ("tenant_id" text NOT NULL, "campaign_id" text NOT NULL, "day" text COLLATE "C" NOT NULL,
  "redemptions" bigint NOT NULL DEFAULT 0, "discount_cents" bigint NOT NULL DEFAULT 0, "discount_sub" bigint NOT NULL DEFAULT 0, "cashback_cents" bigint NOT NULL DEFAULT 0, "cashback_sub" bigint NOT NULL DEFAULT 0,
  "paid_cents" bigint NOT NULL DEFAULT 0, "paid_sub" bigint NOT NULL DEFAULT 0, "rolled_back" bigint NOT NULL DEFAULT 0,
  PRIMARY KEY ("tenant_id", "campaign_id", "day"));
CREATE TABLE IF NOT EXISTS "rollup_points_days" ("tenant_id" text NOT NULL, "day" text COLLATE "C" NOT NULL,
  "credited" bigint NOT NULL DEFAULT 0, "bonus" bigint NOT NULL DEFAULT 0, "debited" bigint NOT NULL DEFAULT 0,
  "expired" bigint NOT NULL DEFAULT 0, "adjusted" bigint NOT NULL DEFAULT 0, "reversed" bigint NOT NULL DEFAULT 0,
  "net" bigint NOT NULL DEFAULT 0,
  PRIMARY KEY ("tenant_id", "day"));
-- A customer's active days (a sale, a redemption, points earned or spent)
-- with the number of events of each; and, for distinct counts over any
-- days, how many customers were active on day after last being active on
-- prev_day ('' for never): the customers active within [d1, d2] are those
-- of the rows with d1 <= day <= d2 and prev_day < d1.
CREATE TABLE IF NOT EXISTS "rollup_customer_days" ("tenant_id" text NOT NULL, "customer_id" text NOT NULL, "day" text COLLATE "C" NOT NULL,
  "events" bigint NOT NULL DEFAULT 0,
  PRIMARY KEY ("tenant_id", "customer_id", "day"));
CREATE TABLE IF NOT EXISTS "rollup_active_pairs" ("tenant_id" text NOT NULL, "day" text COLLATE "C" NOT NULL, "prev_day" text COLLATE "C" NOT NULL,
  "customers" bigint NOT NULL DEFAULT 0,
  PRIMARY KEY ("tenant_id", "day", "prev_day"));
-- Inserting a tenant here rebuilds its rollups from the rows (and the row
-- leaves): the rebuild command, the time zone setting and this migration.
CREATE TABLE IF NOT EXISTS "rollup_rebuilds" ("tenant_id" text NOT NULL);


-- A customer's new active day, or one that no longer is: the pairs of the
-- day, of the customer's previous active day and of the next one change.
-- Row-level BEFORE triggers: each sees the days the statement's earlier
-- rows added or removed.
CREATE OR REPLACE FUNCTION "fideliza_rollup_active_pairs"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  r "rollup_customer_days";
  prev text;
  next text;
BEGIN
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
CREATE OR REPLACE TRIGGER "rollup_customer_day_added" BEFORE INSERT ON "rollup_customer_days"
  FOR EACH ROW EXECUTE FUNCTION "fideliza_rollup_active_pairs"();
CREATE OR REPLACE TRIGGER "rollup_customer_day_removed" BEFORE DELETE ON "rollup_customer_days"
  FOR EACH ROW EXECUTE FUNCTION "fideliza_rollup_active_pairs"();

-- fideliza_rollup_activity is the statements that add sign × each row of
-- changes (a query of tenant_id, customer_id, at, sign) to the customers'
-- active days, and remove the days left with no event. The trigger
-- functions run them: only they see their statement's transition tables.
CREATE OR REPLACE FUNCTION "fideliza_rollup_activity"(changes text) RETURNS text[] LANGUAGE sql IMMUTABLE AS $f$
  SELECT ARRAY[format($q$
    INSERT INTO "rollup_customer_days" AS c ("tenant_id", "customer_id", "day", "events")
    SELECT d."tenant_id", d."customer_id", fideliza_day(d."at", t."time_zone") AS "day", sum(d."sign")
      FROM (%s) d JOIN "tenants" t ON t."id" = d."tenant_id" WHERE d."customer_id" IS NOT NULL
      GROUP BY 1, 2, 3 HAVING sum(d."sign") <> 0 ORDER BY 1, 2, 3
    ON CONFLICT ("tenant_id", "customer_id", "day") DO UPDATE SET "events" = c."events" + excluded."events"$q$, changes),
  format($q$
    DELETE FROM "rollup_customer_days" c USING (SELECT DISTINCT "tenant_id", "customer_id" FROM (%s) d) x
    WHERE c."tenant_id" = x."tenant_id" AND c."customer_id" = x."customer_id" AND c."events" <= 0$q$, changes)]
$f$;

-- Sales: counted on the local day they were sold, by store; a return or a
-- cancellation changes the day of the sale.
CREATE OR REPLACE FUNCTION "fideliza_rollup_sales"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  changes text;
  q text;
BEGIN
  IF TG_OP = 'INSERT' THEN
    changes := 'SELECT 1 AS "sign", * FROM new_rows';
  ELSIF TG_OP = 'DELETE' THEN
    changes := 'SELECT -1 AS "sign", * FROM old_rows';
  ELSE
    changes := 'SELECT s.* FROM new_rows n JOIN old_rows o USING ("id"), LATERAL (SELECT 1 AS "sign", n.* UNION ALL SELECT -1, o.*) s
      WHERE (n."status", n."returned_amount", n."points_credited", n."points_reversed", n."customer_id")
        IS DISTINCT FROM (o."status", o."returned_amount", o."points_credited", o."points_reversed", o."customer_id")';
  END IF;
  EXECUTE format($q$
    INSERT INTO "rollup_sales_days" AS r ("tenant_id", "day", "store_id", "sales", "amount_cents", "amount_sub",
      "discount_cents", "discount_sub", "payable_cents", "payable_sub", "returned_cents", "returned_sub",
      "points_credited", "points_reversed", "cancelled")
    SELECT d."tenant_id", fideliza_day(d."sold_at", t."time_zone") AS "day", d."store_id", sum(d."sign"),
      sum(d."sign" * fideliza_cents(d."amount")), sum(d."sign" * fideliza_sub(d."amount")),
      sum(d."sign" * fideliza_cents(d."discount_amount")), sum(d."sign" * fideliza_sub(d."discount_amount")),
      sum(d."sign" * fideliza_cents(d."amount_payable")), sum(d."sign" * fideliza_sub(d."amount_payable")),
      sum(d."sign" * fideliza_cents(d."returned_amount")), sum(d."sign" * fideliza_sub(d."returned_amount")),
      sum(d."sign" * d."points_credited"), sum(d."sign" * d."points_reversed"), sum(d."sign" * (d."status" = 'CANCELLED')::int)
      FROM (%s) d JOIN "tenants" t ON t."id" = d."tenant_id" GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT ("tenant_id", "day", "store_id") DO UPDATE SET "sales" = r."sales" + excluded."sales",
      "amount_cents" = r."amount_cents" + excluded."amount_cents", "amount_sub" = r."amount_sub" + excluded."amount_sub",
      "discount_cents" = r."discount_cents" + excluded."discount_cents", "discount_sub" = r."discount_sub" + excluded."discount_sub",
      "payable_cents" = r."payable_cents" + excluded."payable_cents", "payable_sub" = r."payable_sub" + excluded."payable_sub",
      "returned_cents" = r."returned_cents" + excluded."returned_cents", "returned_sub" = r."returned_sub" + excluded."returned_sub",
      "points_credited" = r."points_credited" + excluded."points_credited",
      "points_reversed" = r."points_reversed" + excluded."points_reversed", "cancelled" = r."cancelled" + excluded."cancelled"$q$, changes);
  FOREACH q IN ARRAY fideliza_rollup_activity(format('SELECT "tenant_id", "customer_id", "sold_at" AS "at", "sign" FROM (%s) s', changes)) LOOP
    EXECUTE q;
  END LOOP;
  RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER "rollup_sale_insert" AFTER INSERT ON "sales" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "fideliza_rollup_sales"();
CREATE OR REPLACE TRIGGER "rollup_sale_update" AFTER UPDATE ON "sales" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "fideliza_rollup_sales"();
CREATE OR REPLACE TRIGGER "rollup_sale_delete" AFTER DELETE ON "sales" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "fideliza_rollup_sales"();

-- Redemptions: counted on the local day they were made, by campaign; a
-- rollback counts on the redemption's day.
CREATE OR REPLACE FUNCTION "fideliza_rollup_redemptions"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  changes text;
  q text;
BEGIN
  IF TG_OP = 'INSERT' THEN
    changes := 'SELECT 1 AS "sign", * FROM new_rows';
  ELSIF TG_OP = 'DELETE' THEN
    changes := 'SELECT -1 AS "sign", * FROM old_rows';
  ELSE
    changes := 'SELECT s.* FROM new_rows n JOIN old_rows o USING ("id"), LATERAL (SELECT 1 AS "sign", n.* UNION ALL SELECT -1, o.*) s
      WHERE (n."rolled_back_at" IS NULL) <> (o."rolled_back_at" IS NULL)';
  END IF;
  EXECUTE format($q$
    INSERT INTO "rollup_campaign_days" AS r ("tenant_id", "campaign_id", "day", "redemptions", "discount_cents", "discount_sub",
      "cashback_cents", "cashback_sub", "paid_cents", "paid_sub", "rolled_back")
    SELECT d."tenant_id", d."campaign_id", fideliza_day(d."created_at", t."time_zone") AS "day", sum(d."sign"),
      sum(d."sign" * fideliza_cents(d."discount_amount")), sum(d."sign" * fideliza_sub(d."discount_amount")),
      sum(d."sign" * fideliza_cents(d."cashback_amount")), sum(d."sign" * fideliza_sub(d."cashback_amount")),
      sum(d."sign" * fideliza_cents(d."amount_paid")), sum(d."sign" * fideliza_sub(d."amount_paid")),
      sum(d."sign" * (d."rolled_back_at" IS NOT NULL)::int)
      FROM (%s) d JOIN "tenants" t ON t."id" = d."tenant_id" GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT ("tenant_id", "campaign_id", "day") DO UPDATE SET "redemptions" = r."redemptions" + excluded."redemptions",
      "discount_cents" = r."discount_cents" + excluded."discount_cents", "discount_sub" = r."discount_sub" + excluded."discount_sub",
      "cashback_cents" = r."cashback_cents" + excluded."cashback_cents", "cashback_sub" = r."cashback_sub" + excluded."cashback_sub",
      "paid_cents" = r."paid_cents" + excluded."paid_cents", "paid_sub" = r."paid_sub" + excluded."paid_sub",
      "rolled_back" = r."rolled_back" + excluded."rolled_back"$q$, changes);
  FOREACH q IN ARRAY fideliza_rollup_activity(format('SELECT "tenant_id", "customer_id", "created_at" AS "at", "sign" FROM (%s) s', changes)) LOOP
    EXECUTE q;
  END LOOP;
  RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER "rollup_redemption_insert" AFTER INSERT ON "redemptions" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "fideliza_rollup_redemptions"();
CREATE OR REPLACE TRIGGER "rollup_redemption_update" AFTER UPDATE ON "redemptions" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "fideliza_rollup_redemptions"();
CREATE OR REPLACE TRIGGER "rollup_redemption_delete" AFTER DELETE ON "redemptions" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "fideliza_rollup_redemptions"();

-- Ledger movements (entries are never updated): their points by kind on
-- their local day; earning and spending are the customer's activity.
CREATE OR REPLACE FUNCTION "fideliza_rollup_points"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  changes text;
  q text;
BEGIN
  IF TG_OP = 'INSERT' THEN
    changes := 'SELECT 1 AS "sign", * FROM new_rows';
  ELSE
    changes := 'SELECT -1 AS "sign", * FROM old_rows';
  END IF;
  EXECUTE format($q$
    INSERT INTO "rollup_points_days" AS r ("tenant_id", "day", "credited", "bonus", "debited", "expired", "adjusted", "reversed", "net")
    SELECT d."tenant_id", fideliza_day(d."created_at", t."time_zone") AS "day",
      coalesce(sum(d."sign" * d."points") FILTER (WHERE d."kind" = 'credit'), 0), coalesce(sum(d."sign" * d."points") FILTER (WHERE d."kind" = 'bonus'), 0),
      coalesce(sum(d."sign" * d."points") FILTER (WHERE d."kind" = 'debit'), 0), coalesce(sum(d."sign" * d."points") FILTER (WHERE d."kind" = 'expiration'), 0),
      coalesce(sum(d."sign" * d."points") FILTER (WHERE d."kind" = 'adjustment'), 0), coalesce(sum(d."sign" * d."points") FILTER (WHERE d."kind" = 'reversal'), 0),
      sum(d."sign" * d."points")
      FROM (%s) d JOIN "tenants" t ON t."id" = d."tenant_id" GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT ("tenant_id", "day") DO UPDATE SET "credited" = r."credited" + excluded."credited",
      "bonus" = r."bonus" + excluded."bonus", "debited" = r."debited" + excluded."debited",
      "expired" = r."expired" + excluded."expired", "adjusted" = r."adjusted" + excluded."adjusted",
      "reversed" = r."reversed" + excluded."reversed", "net" = r."net" + excluded."net"$q$, changes);
  FOREACH q IN ARRAY fideliza_rollup_activity(format($q$SELECT "tenant_id", "customer_id", "created_at" AS "at", "sign" FROM (%s) s
    WHERE "kind" IN ('credit', 'bonus', 'debit')$q$, changes)) LOOP
    EXECUTE q;
  END LOOP;
  RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER "rollup_points_insert" AFTER INSERT ON "points_entries" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "fideliza_rollup_points"();
CREATE OR REPLACE TRIGGER "rollup_points_delete" AFTER DELETE ON "points_entries" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "fideliza_rollup_points"();

-- A rebuild: the tenant's rollups again from its rows, in its time zone.
CREATE OR REPLACE FUNCTION "fideliza_rollup_rebuild"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM "rollup_sales_days" WHERE "tenant_id" = NEW."tenant_id";
  DELETE FROM "rollup_campaign_days" WHERE "tenant_id" = NEW."tenant_id";
  DELETE FROM "rollup_points_days" WHERE "tenant_id" = NEW."tenant_id";
  DELETE FROM "rollup_customer_days" WHERE "tenant_id" = NEW."tenant_id";
  DELETE FROM "rollup_active_pairs" WHERE "tenant_id" = NEW."tenant_id"; -- after the days, whose triggers move pairs
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
    JOIN "tenants" t ON t."id" = NEW."tenant_id" GROUP BY 1, 2, 3 ORDER BY 2, 3;
  DELETE FROM "rollup_rebuilds" WHERE "tenant_id" = NEW."tenant_id";
  RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER "rollup_rebuild" AFTER INSERT ON "rollup_rebuilds" FOR EACH ROW EXECUTE FUNCTION "fideliza_rollup_rebuild"();
-- A new time zone moves every instant to the day of the new zone.
CREATE OR REPLACE FUNCTION "fideliza_rollup_time_zone"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "rollup_rebuilds" ("tenant_id") VALUES (NEW."id");
  RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER "rollup_time_zone" AFTER UPDATE OF "time_zone" ON "tenants"
  FOR EACH ROW WHEN (OLD."time_zone" IS DISTINCT FROM NEW."time_zone") EXECUTE FUNCTION "fideliza_rollup_time_zone"();
INSERT INTO "rollup_rebuilds" ("tenant_id") SELECT "id" FROM "tenants";

-- Time-ordered lists and dashboards read a tenant's rows by instant. Every
-- statement here can run again (a test replays the migrations after 0025).
CREATE INDEX IF NOT EXISTS "sale_tenant_id_sold_at" ON "sales" ("tenant_id", "sold_at");
CREATE INDEX IF NOT EXISTS "redemption_tenant_id_created_at" ON "redemptions" ("tenant_id", "created_at");
CREATE INDEX IF NOT EXISTS "pointsentry_tenant_id_created_at" ON "points_entries" ("tenant_id", "created_at");
