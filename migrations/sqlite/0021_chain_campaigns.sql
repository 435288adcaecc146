-- 0021: a chain's campaigns: stacking rules and priority, coupon codes (required
-- by a campaign, used by its redemptions), brands, and the product catalogue.
ALTER TABLE `campaigns` ADD COLUMN `stacking` text NULL;
ALTER TABLE `campaigns` ADD COLUMN `priority` integer NOT NULL DEFAULT (0);
ALTER TABLE `campaigns` ADD COLUMN `requires_code` bool NOT NULL DEFAULT (false);
ALTER TABLE `campaigns` ADD COLUMN `eligible_brands` json NULL;
ALTER TABLE `validation_tokens` ADD COLUMN `coupon_id` text NULL;
ALTER TABLE `redemptions` ADD COLUMN `coupon_id` text NULL;
CREATE TABLE `coupons` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `code` text NOT NULL, `max_uses` integer NOT NULL DEFAULT (1), `uses` integer NOT NULL DEFAULT (0), `last_used_at` datetime NULL, `note` text NOT NULL DEFAULT (''), `campaign_id` text NOT NULL, `tenant_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `coupons_campaigns_coupons` FOREIGN KEY (`campaign_id`) REFERENCES `campaigns` (`id`) ON DELETE CASCADE, CONSTRAINT `coupons_tenants_tenant` FOREIGN KEY (`tenant_id`) REFERENCES `tenants` (`id`) ON DELETE NO ACTION);
CREATE UNIQUE INDEX `coupon_tenant_id_code` ON `coupons` (`tenant_id`, `code`);
CREATE INDEX `coupon_campaign_id` ON `coupons` (`campaign_id`);
CREATE TABLE `products` (`id` text NOT NULL, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `gtin` text NULL, `sku` text NULL, `name` text NOT NULL, `category` text NOT NULL DEFAULT (''), `brand` text NOT NULL DEFAULT (''), `tenant_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `products_tenants_tenant` FOREIGN KEY (`tenant_id`) REFERENCES `tenants` (`id`) ON DELETE NO ACTION);
CREATE UNIQUE INDEX `product_tenant_id_gtin` ON `products` (`tenant_id`, `gtin`);
CREATE UNIQUE INDEX `product_tenant_id_sku` ON `products` (`tenant_id`, `sku`);
ALTER TABLE `sales` ADD COLUMN `coupon_code` text NULL;
ALTER TABLE `redemptions` ADD COLUMN `budget_returned` text NULL;
