-- The origins of a tenant's back-office web apps allowed to call the API
-- from a browser (CORS, issue 39); none by default.
ALTER TABLE "tenants" ADD COLUMN "cors_origins" jsonb NULL;

-- A commit that adds outbox events notifies the channel fideliza_events
-- (storage.DB.Listen): GraphQL subscriptions in every serve process read
-- the new events at once. PostgreSQL sends a notification at commit only,
-- and one per channel and payload per transaction.
CREATE FUNCTION "fideliza_notify_events"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('fideliza_events', '');
  RETURN NULL;
END
$$;
CREATE TRIGGER "events_notify" AFTER INSERT ON "events" FOR EACH STATEMENT EXECUTE FUNCTION "fideliza_notify_events"();
