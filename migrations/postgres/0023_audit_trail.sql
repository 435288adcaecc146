-- 0023: the audit trail of back-office changes, exports and erasures, how long a tenant keeps it, and after how many years of inactivity its customers are anonymized.
CREATE TABLE "audit_events" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "actor" character varying NOT NULL, "actor_kind" character varying NOT NULL, "action" character varying NOT NULL, "target_type" character varying NOT NULL, "target_id" character varying NOT NULL DEFAULT '', "fields" jsonb NULL, "tenant_id" character varying NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "audit_events_tenants_tenant" FOREIGN KEY ("tenant_id") REFERENCES "tenants" ("id") ON DELETE NO ACTION);
CREATE INDEX "auditevent_tenant_id_id" ON "audit_events" ("tenant_id", "id");
CREATE INDEX "auditevent_tenant_id_created_at" ON "audit_events" ("tenant_id", "created_at");
ALTER TABLE "tenants" ADD COLUMN "audit_retention_days" bigint NOT NULL DEFAULT 1825;
ALTER TABLE "tenants" ADD COLUMN "anonymize_inactive_years" bigint NULL;
