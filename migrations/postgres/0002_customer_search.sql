-- 0002: folded name for accent- and case-insensitive search, with trigram
-- indexes so substring searches of name and e-mail do not scan the table;
-- keyset index of the customer list (newest first).
ALTER TABLE "customers" ADD COLUMN "name_search" character varying NOT NULL DEFAULT '';
UPDATE "customers" SET "name_search" = lower("name");
CREATE INDEX "customer_tenant_id_id" ON "customers" ("tenant_id", "id");
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX "customer_name_search_trgm" ON "customers" USING gin ("name_search" gin_trgm_ops);
CREATE INDEX "customer_email_key_trgm" ON "customers" USING gin ("email_key" gin_trgm_ops);
