-- 0020: a campaign's money budgets (in all, per store, per period) with what
-- it gave so far, and the store each redemption was given at.
ALTER TABLE `campaigns` ADD COLUMN `budget_total` text NULL;
ALTER TABLE `campaigns` ADD COLUMN `budget_per_store` text NULL;
ALTER TABLE `campaigns` ADD COLUMN `budget_period` text NULL;
ALTER TABLE `campaigns` ADD COLUMN `budget_per_period` text NULL;
ALTER TABLE `campaigns` ADD COLUMN `budget_spent` text NULL;
ALTER TABLE `campaigns` ADD COLUMN `budget_spent_by` json NULL;
ALTER TABLE `redemptions` ADD COLUMN `store_code` text NOT NULL DEFAULT ('');
