-- 0050: the ledger's rollup trigger (0027) as static SQL. Every sale
-- processed inserts an entry, and the trigger built its three statements
-- as text and ran them with EXECUTE, which PostgreSQL parses and plans on
-- every call: the largest single cost of processing a sale. One function
-- per operation names its transition table, so PL/pgSQL plans the
-- statements once per connection. An insert only adds events to the
-- customers' days, so it has no days to remove.
CREATE OR REPLACE FUNCTION "fideliza_rollup_points_inserted"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "rollup_points_days" AS r ("tenant_id", "day", "credited", "bonus", "debited", "expired", "adjusted", "reversed", "net")
  SELECT d."tenant_id", fideliza_day(d."created_at", t."time_zone") AS "day",
    coalesce(sum(d."points") FILTER (WHERE d."kind" = 'credit'), 0), coalesce(sum(d."points") FILTER (WHERE d."kind" = 'bonus'), 0),
    coalesce(sum(d."points") FILTER (WHERE d."kind" = 'debit'), 0), coalesce(sum(d."points") FILTER (WHERE d."kind" = 'expiration'), 0),
    coalesce(sum(d."points") FILTER (WHERE d."kind" = 'adjustment'), 0), coalesce(sum(d."points") FILTER (WHERE d."kind" = 'reversal'), 0),
    sum(d."points")
    FROM new_rows d JOIN "tenants" t ON t."id" = d."tenant_id" GROUP BY 1, 2 ORDER BY 1, 2
  ON CONFLICT ("tenant_id", "day") DO UPDATE SET "credited" = r."credited" + excluded."credited",
    "bonus" = r."bonus" + excluded."bonus", "debited" = r."debited" + excluded."debited",
    "expired" = r."expired" + excluded."expired", "adjusted" = r."adjusted" + excluded."adjusted",
    "reversed" = r."reversed" + excluded."reversed", "net" = r."net" + excluded."net";
  INSERT INTO "rollup_customer_days" AS c ("tenant_id", "customer_id", "day", "events")
  SELECT d."tenant_id", d."customer_id", fideliza_day(d."created_at", t."time_zone") AS "day", count(*)
    FROM new_rows d JOIN "tenants" t ON t."id" = d."tenant_id"
    WHERE d."customer_id" IS NOT NULL AND d."kind" IN ('credit', 'bonus', 'debit')
    GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT ("tenant_id", "customer_id", "day") DO UPDATE SET "events" = c."events" + excluded."events";
  RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER "rollup_points_insert" AFTER INSERT ON "points_entries" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION "fideliza_rollup_points_inserted"();
