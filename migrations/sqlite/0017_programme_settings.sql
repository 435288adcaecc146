-- 0017: the programme's time zone, pending period, level downgrade grace and
-- churn refit interval; customers' pending points and level grace; lots'
-- pending period.
ALTER TABLE `tenants` ADD COLUMN `time_zone` text NOT NULL DEFAULT ('America/Sao_Paulo');
ALTER TABLE `tenants` ADD COLUMN `points_pending_days` integer NOT NULL DEFAULT (0);
ALTER TABLE `tenants` ADD COLUMN `level_grace_days` integer NOT NULL DEFAULT (0);
ALTER TABLE `tenants` ADD COLUMN `churn_refit_days` integer NOT NULL DEFAULT (7);
ALTER TABLE `customers` ADD COLUMN `level_grace_since` datetime NULL;
ALTER TABLE `customers` ADD COLUMN `points_pending` integer NOT NULL DEFAULT (0);
ALTER TABLE `points_lots` ADD COLUMN `pending_until` datetime NULL;
CREATE INDEX `pointslot_pending_until` ON `points_lots` (`pending_until`);
-- The churn scoring replaces scores by ranges of customer ids within a tenant.
CREATE INDEX `customerscore_tenant_id_customer_id` ON `customer_scores` (`tenant_id`, `customer_id`);
