-- (Written to run again harmlessly, as a database brought back to an older
-- version is migrated again.)
-- The origins of a tenant's back-office web apps allowed to call the API
-- from a browser (CORS, issue 39); none by default.
ALTER TABLE "tenants" ADD COLUMN IF NOT EXISTS "cors_origins" jsonb NULL;

-- A commit that adds outbox events notifies the channel fideliza_events
-- (storage.DB.Listen): GraphQL subscriptions in every serve process read
-- the new events at once. PostgreSQL sends a notification at commit only,
-- and one per channel and payload per transaction.
CREATE OR REPLACE FUNCTION "fideliza_notify_events"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('fideliza_events', '');
  RETURN NULL;
END
$$;
DROP TRIGGER IF EXISTS "events_notify" ON "events";
CREATE TRIGGER "events_notify" AFTER INSERT ON "events" FOR EACH STATEMENT EXECUTE FUNCTION "fideliza_notify_events"();
