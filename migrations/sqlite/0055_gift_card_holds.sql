-- 0055: gift card holds: a hold of a gift card bound to no one names no
-- customer (the card's code pays), and a card's holds are counted by card.
-- SQLite changes a column's nullability by rebuilding the table.
CREATE TABLE `wallet_holds_0055` (`id` text NOT NULL, `created_at` datetime NOT NULL, `wallet` text NOT NULL, `gift_card_id` text NULL, `channel` text NOT NULL, `session` text NOT NULL, `store_code` text NOT NULL DEFAULT (''), `cents` integer NOT NULL, `status` text NOT NULL DEFAULT ('open'), `expires_at` datetime NOT NULL, `sale_id` text NULL, `order_id` text NULL, `closed_at` datetime NULL, `tenant_id` text NOT NULL, `customer_id` text NULL, PRIMARY KEY (`id`), CONSTRAINT `wallet_holds_tenants_tenant` FOREIGN KEY (`tenant_id`) REFERENCES `tenants` (`id`) ON DELETE NO ACTION, CONSTRAINT `wallet_holds_customers_customer` FOREIGN KEY (`customer_id`) REFERENCES `customers` (`id`) ON DELETE SET NULL);
INSERT INTO `wallet_holds_0055` (`id`, `created_at`, `wallet`, `gift_card_id`, `channel`, `session`, `store_code`, `cents`, `status`, `expires_at`, `sale_id`, `order_id`, `closed_at`, `tenant_id`, `customer_id`) SELECT `id`, `created_at`, `wallet`, `gift_card_id`, `channel`, `session`, `store_code`, `cents`, `status`, `expires_at`, `sale_id`, `order_id`, `closed_at`, `tenant_id`, `customer_id` FROM `wallet_holds`;
DROP TABLE `wallet_holds`;
ALTER TABLE `wallet_holds_0055` RENAME TO `wallet_holds`;
CREATE UNIQUE INDEX `wallethold_tenant_id_session` ON `wallet_holds` (`tenant_id`, `session`);
CREATE INDEX `wallethold_tenant_id_customer_id_wallet_status` ON `wallet_holds` (`tenant_id`, `customer_id`, `wallet`, `status`);
CREATE INDEX `wallethold_status_expires_at` ON `wallet_holds` (`status`, `expires_at`);
CREATE INDEX `wallethold_tenant_id_gift_card_id_status` ON `wallet_holds` (`tenant_id`, `gift_card_id`, `status`);
