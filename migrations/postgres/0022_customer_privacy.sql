-- 0022: a customer's consents to WhatsApp marketing and to data sharing, the
-- history of every consent change, and the erasure of a customer's personal
-- data (LGPD), after which its pseudonymous record stays.
ALTER TABLE "customers" ADD COLUMN "consent_marketing_whatsapp" boolean NOT NULL DEFAULT false, ADD COLUMN "consent_data_sharing" boolean NOT NULL DEFAULT false, ADD COLUMN "erased_at" timestamptz NULL;
CREATE TABLE "consent_changes" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "purpose" character varying NOT NULL, "granted" boolean NOT NULL, "channel" character varying NOT NULL, "source" character varying NOT NULL DEFAULT '', "tenant_id" character varying NOT NULL, "customer_id" character varying NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "consent_changes_tenants_tenant" FOREIGN KEY ("tenant_id") REFERENCES "tenants" ("id") ON DELETE NO ACTION, CONSTRAINT "consent_changes_customers_consent_changes" FOREIGN KEY ("customer_id") REFERENCES "customers" ("id") ON DELETE NO ACTION);
CREATE INDEX "consentchange_tenant_id_customer_id_id" ON "consent_changes" ("tenant_id", "customer_id", "id");
