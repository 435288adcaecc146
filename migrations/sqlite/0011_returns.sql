-- 0011: returns and cancellations of sales, reversals that leave a points
-- debt, redemptions rolled back.
ALTER TABLE `customers` ADD COLUMN `points_debt` integer NOT NULL DEFAULT (0);
ALTER TABLE `points_entries` ADD COLUMN `debt_after` integer NOT NULL DEFAULT (0);
ALTER TABLE `redemptions` ADD COLUMN `rolled_back_at` datetime NULL;
ALTER TABLE `redemptions` ADD COLUMN `rollback_reason` text NULL;
ALTER TABLE `sale_items` ADD COLUMN `returned_quantity` text NOT NULL DEFAULT ('0');
ALTER TABLE `sales` ADD COLUMN `returned_amount` text NOT NULL DEFAULT ('0');
ALTER TABLE `sales` ADD COLUMN `points_reversed` integer NOT NULL DEFAULT (0);
CREATE TABLE `sale_returns` (`id` text NOT NULL, `created_at` datetime NOT NULL, `external_id` text NOT NULL, `kind` text NOT NULL, `pos_id` text NOT NULL DEFAULT (''), `returned_at` datetime NOT NULL, `reason` text NOT NULL DEFAULT (''), `lines` json NOT NULL, `amount` text NOT NULL, `status` text NOT NULL DEFAULT ('RECEIVED'), `points_reversed` integer NOT NULL DEFAULT (0), `processed_at` datetime NULL, `sale_id` text NOT NULL, `tenant_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `sale_returns_sales_returns` FOREIGN KEY (`sale_id`) REFERENCES `sales` (`id`) ON DELETE NO ACTION, CONSTRAINT `sale_returns_tenants_tenant` FOREIGN KEY (`tenant_id`) REFERENCES `tenants` (`id`) ON DELETE NO ACTION);
CREATE UNIQUE INDEX `salereturn_tenant_id_sale_id_external_id` ON `sale_returns` (`tenant_id`, `sale_id`, `external_id`);
