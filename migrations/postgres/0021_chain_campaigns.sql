-- 0021: a chain's campaigns: stacking rules and priority, coupon codes (required
-- by a campaign, used by its redemptions), brands, and the product catalogue.
ALTER TABLE "campaigns" ADD COLUMN "stacking" character varying NULL, ADD COLUMN "priority" bigint NOT NULL DEFAULT 0, ADD COLUMN "requires_code" boolean NOT NULL DEFAULT false, ADD COLUMN "eligible_brands" jsonb NULL;
ALTER TABLE "redemptions" ADD COLUMN "coupon_id" character varying NULL;
ALTER TABLE "validation_tokens" ADD COLUMN "coupon_id" character varying NULL;
CREATE TABLE "coupons" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "code" character varying NOT NULL, "max_uses" bigint NOT NULL DEFAULT 1, "uses" bigint NOT NULL DEFAULT 0, "last_used_at" timestamptz NULL, "note" character varying NOT NULL DEFAULT '', "campaign_id" character varying NOT NULL, "tenant_id" character varying NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "coupons_campaigns_coupons" FOREIGN KEY ("campaign_id") REFERENCES "campaigns" ("id") ON DELETE CASCADE, CONSTRAINT "coupons_tenants_tenant" FOREIGN KEY ("tenant_id") REFERENCES "tenants" ("id") ON DELETE NO ACTION);
CREATE UNIQUE INDEX "coupon_tenant_id_code" ON "coupons" ("tenant_id", "code");
CREATE INDEX "coupon_campaign_id" ON "coupons" ("campaign_id");
CREATE TABLE "products" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, "gtin" character varying NULL, "sku" character varying NULL, "name" character varying NOT NULL, "category" character varying NOT NULL DEFAULT '', "brand" character varying NOT NULL DEFAULT '', "tenant_id" character varying NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "products_tenants_tenant" FOREIGN KEY ("tenant_id") REFERENCES "tenants" ("id") ON DELETE NO ACTION);
CREATE UNIQUE INDEX "product_tenant_id_gtin" ON "products" ("tenant_id", "gtin");
CREATE UNIQUE INDEX "product_tenant_id_sku" ON "products" ("tenant_id", "sku");
ALTER TABLE "sales" ADD COLUMN "coupon_code" character varying NULL;
ALTER TABLE "redemptions" ADD COLUMN "budget_returned" numeric(20,8) NULL;
