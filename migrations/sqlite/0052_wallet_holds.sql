-- 0052: cashback spent through holds: the holds of money wallets (cashback
-- now, gift cards later), and the programme's rules for spending cashback
-- (the channels, the largest share of a sale or order, the fewest R$ at
-- once), set for every tenant to their defaults: both channels, the whole
-- sale, any amount.
ALTER TABLE `tenants` ADD COLUMN `cashback_spend_channels` json NOT NULL DEFAULT ('["ecommerce", "pdv"]');
ALTER TABLE `tenants` ADD COLUMN `cashback_spend_max_share` text NOT NULL DEFAULT ('1');
ALTER TABLE `tenants` ADD COLUMN `cashback_spend_min` text NOT NULL DEFAULT ('0');
CREATE TABLE `wallet_holds` (`id` text NOT NULL, `created_at` datetime NOT NULL, `wallet` text NOT NULL, `gift_card_id` text NULL, `channel` text NOT NULL, `session` text NOT NULL, `store_code` text NOT NULL DEFAULT (''), `cents` integer NOT NULL, `status` text NOT NULL DEFAULT ('open'), `expires_at` datetime NOT NULL, `sale_id` text NULL, `order_id` text NULL, `closed_at` datetime NULL, `tenant_id` text NOT NULL, `customer_id` text NOT NULL, PRIMARY KEY (`id`), CONSTRAINT `wallet_holds_tenants_tenant` FOREIGN KEY (`tenant_id`) REFERENCES `tenants` (`id`) ON DELETE NO ACTION, CONSTRAINT `wallet_holds_customers_customer` FOREIGN KEY (`customer_id`) REFERENCES `customers` (`id`) ON DELETE NO ACTION);
CREATE UNIQUE INDEX `wallethold_tenant_id_session` ON `wallet_holds` (`tenant_id`, `session`);
CREATE INDEX `wallethold_tenant_id_customer_id_wallet_status` ON `wallet_holds` (`tenant_id`, `customer_id`, `wallet`, `status`);
CREATE INDEX `wallethold_status_expires_at` ON `wallet_holds` (`status`, `expires_at`);
