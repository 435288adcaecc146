-- 0004: a points lot refers to its customer and entry by foreign keys.
CREATE TABLE `new_points_lots` (`id` text NOT NULL, `created_at` datetime NOT NULL, `points` integer NOT NULL, `remaining` integer NOT NULL, `expires_at` datetime NOT NULL, `expiring_notified_at` datetime NULL, `tenant_id` text NOT NULL, `customer_id` text NOT NULL, `entry_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `points_lots_tenants_tenant` FOREIGN KEY (`tenant_id`) REFERENCES `tenants` (`id`) ON DELETE NO ACTION, CONSTRAINT `points_lots_customers_customer` FOREIGN KEY (`customer_id`) REFERENCES `customers` (`id`) ON DELETE NO ACTION, CONSTRAINT `points_lots_points_entries_entry` FOREIGN KEY (`entry_id`) REFERENCES `points_entries` (`id`) ON DELETE NO ACTION, CONSTRAINT `points_lots_remaining_within_points` CHECK (remaining >= 0 AND remaining <= points));
INSERT INTO `new_points_lots` (`id`, `created_at`, `points`, `remaining`, `expires_at`, `expiring_notified_at`, `tenant_id`, `customer_id`, `entry_id`) SELECT `id`, `created_at`, `points`, `remaining`, `expires_at`, `expiring_notified_at`, `tenant_id`, `customer_id`, `entry_id` FROM `points_lots`;
DROP TABLE `points_lots`;
ALTER TABLE `new_points_lots` RENAME TO `points_lots`;
CREATE INDEX `pointslot_tenant_id_customer_id_expires_at` ON `points_lots` (`tenant_id`, `customer_id`, `expires_at`);
CREATE INDEX `pointslot_expires_at` ON `points_lots` (`expires_at`);
CREATE UNIQUE INDEX `pointslot_entry_id` ON `points_lots` (`entry_id`);
