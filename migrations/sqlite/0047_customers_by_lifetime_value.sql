-- 0047 (issue 52): customers ordered and compared by lifetime value. The
-- value is a decimal, stored as text here, which orders and compares as
-- text; its cents, kept by the application beside it, order as numbers.
-- The existing values are converted as the application rounds them (half
-- away from zero) for every amount a double holds to the cent.
ALTER TABLE `customers` ADD COLUMN `lifetime_value_cents` integer NOT NULL DEFAULT 0;
UPDATE `customers` SET `lifetime_value_cents` = CAST(ROUND(CAST(`lifetime_value` AS REAL) * 100) AS INTEGER)
  WHERE `lifetime_value` <> '0';
CREATE INDEX IF NOT EXISTS `customer_tenant_id_lifetime_value_cents_id` ON `customers` (`tenant_id`, `lifetime_value_cents`, `id`);
