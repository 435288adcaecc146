-- 0033 (issue 36): points spent as money at the till and at checkout: the
-- programme's rules on the tenant, the holds that reserve points, and the
-- hold a sale's POINTS payment spends.
ALTER TABLE `tenants` ADD COLUMN `points_value` text NULL;
ALTER TABLE `tenants` ADD COLUMN `points_spend_min` integer NOT NULL DEFAULT (0);
ALTER TABLE `tenants` ADD COLUMN `points_spend_max_share` text NULL;
ALTER TABLE `tenants` ADD COLUMN `points_spend_channels` json NULL;
ALTER TABLE `sale_payments` ADD COLUMN `hold_id` text NULL;
CREATE TABLE IF NOT EXISTS `points_holds` (`id` text NOT NULL, `created_at` datetime NOT NULL, `channel` text NOT NULL, `session` text NOT NULL, `store_code` text NOT NULL DEFAULT (''), `points` integer NOT NULL, `amount` text NOT NULL, `status` text NOT NULL DEFAULT ('open'), `expires_at` datetime NOT NULL, `sale_id` text NULL, `order_id` text NULL, `closed_at` datetime NULL, `tenant_id` text NOT NULL, `customer_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `points_holds_tenants_tenant` FOREIGN KEY (`tenant_id`) REFERENCES `tenants` (`id`) ON DELETE NO ACTION, CONSTRAINT `points_holds_customers_customer` FOREIGN KEY (`customer_id`) REFERENCES `customers` (`id`) ON DELETE NO ACTION);
CREATE UNIQUE INDEX IF NOT EXISTS `pointshold_tenant_id_session` ON `points_holds` (`tenant_id`, `session`);
CREATE INDEX IF NOT EXISTS `pointshold_tenant_id_customer_id_status` ON `points_holds` (`tenant_id`, `customer_id`, `status`);
CREATE INDEX IF NOT EXISTS `pointshold_status_expires_at` ON `points_holds` (`status`, `expires_at`);
