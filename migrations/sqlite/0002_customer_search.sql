-- 0002: folded name for accent- and case-insensitive search; keyset index of
-- the customer list (newest first). SQLite cannot index a substring search:
-- name search scans the tenant's customers.
ALTER TABLE `customers` ADD COLUMN `name_search` text NOT NULL DEFAULT ('');
UPDATE `customers` SET `name_search` = lower(`name`);
CREATE INDEX `customer_tenant_id_id` ON `customers` (`tenant_id`, `id`);
