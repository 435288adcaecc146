-- 0045 (issue 38): what each customer paid within the period of each
-- campaign with a holdout, for the campaign's lift: the sales registered
-- for the customer with sold_at in [starts_at, ends_at) that are not
-- cancelled, how many and their amount payable, in integer cents and the
-- rest in 10^-8 R$ as the other rollups (0027). A campaign's dates and
-- holdout are fixed at creation, so its rows are counted when it is created
-- and then kept by triggers in the statement that writes a sale; a rebuild
-- of the tenant's rollups counts them again. A customer with no such sale
-- has no row. Instants compare as the stored UTC text, as every query's do.
CREATE TABLE IF NOT EXISTS `rollup_campaign_customers` (`tenant_id` text NOT NULL, `campaign_id` text NOT NULL,
  `customer_id` text NOT NULL, `sales` integer NOT NULL DEFAULT 0, `paid_cents` integer NOT NULL DEFAULT 0,
  `paid_sub` integer NOT NULL DEFAULT 0,
  PRIMARY KEY (`tenant_id`, `campaign_id`, `customer_id`)) WITHOUT ROWID;
-- The campaigns a sale counts for, found without reading the others.
CREATE INDEX IF NOT EXISTS `campaigns_holdout_period` ON `campaigns` (`tenant_id`, `starts_at`, `ends_at`)
  WHERE `holdout_basis_points` > 0;

-- Filled once here from the sales of every tenant (the statement of the
-- campaign's and the rebuild's triggers below, for all campaigns).
DELETE FROM `rollup_campaign_customers`;
INSERT INTO `rollup_campaign_customers` (`tenant_id`, `campaign_id`, `customer_id`, `sales`, `paid_cents`, `paid_sub`)
  SELECT c.`tenant_id`, c.`id`, s.`customer_id`, count(*), sum(fideliza_cents(s.`amount_payable`)), sum(fideliza_sub(s.`amount_payable`))
  FROM `campaigns` c JOIN `sales` s ON s.`tenant_id` = c.`tenant_id` AND s.`sold_at` >= c.`starts_at` AND s.`sold_at` < c.`ends_at`
  WHERE c.`holdout_basis_points` > 0 AND s.`customer_id` IS NOT NULL AND s.`status` <> 'CANCELLED'
  GROUP BY c.`tenant_id`, c.`id`, s.`customer_id`;

-- A sale that counts (a customer's, not cancelled) appears or goes: the
-- rows of the campaigns whose period holds it gain or lose it.
CREATE TRIGGER IF NOT EXISTS `campaign_customers_sale_insert` AFTER INSERT ON `sales`
WHEN new.`customer_id` IS NOT NULL AND new.`status` <> 'CANCELLED'
BEGIN
  INSERT INTO `rollup_campaign_customers` (`tenant_id`, `campaign_id`, `customer_id`, `sales`, `paid_cents`, `paid_sub`)
    SELECT new.`tenant_id`, c.`id`, new.`customer_id`, 1, fideliza_cents(new.`amount_payable`), fideliza_sub(new.`amount_payable`)
    FROM `campaigns` c WHERE c.`tenant_id` = new.`tenant_id` AND c.`holdout_basis_points` > 0
      AND c.`starts_at` <= new.`sold_at` AND c.`ends_at` > new.`sold_at`
    ON CONFLICT (`tenant_id`, `campaign_id`, `customer_id`) DO UPDATE SET `sales` = `sales` + 1,
      `paid_cents` = `paid_cents` + excluded.`paid_cents`, `paid_sub` = `paid_sub` + excluded.`paid_sub`;
END;
CREATE TRIGGER IF NOT EXISTS `campaign_customers_sale_update` AFTER UPDATE OF `status`, `customer_id`, `sold_at`, `amount_payable` ON `sales`
WHEN (old.`status` = 'CANCELLED') <> (new.`status` = 'CANCELLED') OR old.`customer_id` IS NOT new.`customer_id`
  OR old.`sold_at` IS NOT new.`sold_at` OR old.`amount_payable` IS NOT new.`amount_payable`
BEGIN
  UPDATE `rollup_campaign_customers` SET `sales` = `sales` - 1,
      `paid_cents` = `paid_cents` - fideliza_cents(old.`amount_payable`), `paid_sub` = `paid_sub` - fideliza_sub(old.`amount_payable`)
    WHERE old.`customer_id` IS NOT NULL AND old.`status` <> 'CANCELLED' AND `tenant_id` = old.`tenant_id` AND `customer_id` = old.`customer_id`
      AND `campaign_id` IN (SELECT c.`id` FROM `campaigns` c WHERE c.`tenant_id` = old.`tenant_id` AND c.`holdout_basis_points` > 0
        AND c.`starts_at` <= old.`sold_at` AND c.`ends_at` > old.`sold_at`);
  DELETE FROM `rollup_campaign_customers` WHERE `sales` <= 0 AND `tenant_id` = old.`tenant_id` AND `customer_id` = old.`customer_id`
    AND `campaign_id` IN (SELECT c.`id` FROM `campaigns` c WHERE c.`tenant_id` = old.`tenant_id` AND c.`holdout_basis_points` > 0
      AND c.`starts_at` <= old.`sold_at` AND c.`ends_at` > old.`sold_at`);
  INSERT INTO `rollup_campaign_customers` (`tenant_id`, `campaign_id`, `customer_id`, `sales`, `paid_cents`, `paid_sub`)
    SELECT new.`tenant_id`, c.`id`, new.`customer_id`, 1, fideliza_cents(new.`amount_payable`), fideliza_sub(new.`amount_payable`)
    FROM `campaigns` c WHERE new.`customer_id` IS NOT NULL AND new.`status` <> 'CANCELLED'
      AND c.`tenant_id` = new.`tenant_id` AND c.`holdout_basis_points` > 0 AND c.`starts_at` <= new.`sold_at` AND c.`ends_at` > new.`sold_at`
    ON CONFLICT (`tenant_id`, `campaign_id`, `customer_id`) DO UPDATE SET `sales` = `sales` + 1,
      `paid_cents` = `paid_cents` + excluded.`paid_cents`, `paid_sub` = `paid_sub` + excluded.`paid_sub`;
END;
CREATE TRIGGER IF NOT EXISTS `campaign_customers_sale_delete` AFTER DELETE ON `sales`
WHEN old.`customer_id` IS NOT NULL AND old.`status` <> 'CANCELLED'
BEGIN
  UPDATE `rollup_campaign_customers` SET `sales` = `sales` - 1,
      `paid_cents` = `paid_cents` - fideliza_cents(old.`amount_payable`), `paid_sub` = `paid_sub` - fideliza_sub(old.`amount_payable`)
    WHERE `tenant_id` = old.`tenant_id` AND `customer_id` = old.`customer_id`
      AND `campaign_id` IN (SELECT c.`id` FROM `campaigns` c WHERE c.`tenant_id` = old.`tenant_id` AND c.`holdout_basis_points` > 0
        AND c.`starts_at` <= old.`sold_at` AND c.`ends_at` > old.`sold_at`);
  DELETE FROM `rollup_campaign_customers` WHERE `sales` <= 0 AND `tenant_id` = old.`tenant_id` AND `customer_id` = old.`customer_id`
    AND `campaign_id` IN (SELECT c.`id` FROM `campaigns` c WHERE c.`tenant_id` = old.`tenant_id` AND c.`holdout_basis_points` > 0
      AND c.`starts_at` <= old.`sold_at` AND c.`ends_at` > old.`sold_at`);
END;

-- A campaign with a holdout is counted from the sales of its period when
-- it is created (or its period or holdout change), and its rows go with it.
CREATE TRIGGER IF NOT EXISTS `campaign_customers_campaign_insert` AFTER INSERT ON `campaigns`
WHEN new.`holdout_basis_points` > 0
BEGIN
  INSERT INTO `rollup_campaign_customers` (`tenant_id`, `campaign_id`, `customer_id`, `sales`, `paid_cents`, `paid_sub`)
    SELECT new.`tenant_id`, new.`id`, s.`customer_id`, count(*), sum(fideliza_cents(s.`amount_payable`)), sum(fideliza_sub(s.`amount_payable`))
    FROM `sales` s WHERE s.`tenant_id` = new.`tenant_id` AND s.`sold_at` >= new.`starts_at` AND s.`sold_at` < new.`ends_at`
      AND s.`customer_id` IS NOT NULL AND s.`status` <> 'CANCELLED'
    GROUP BY s.`customer_id`;
END;
CREATE TRIGGER IF NOT EXISTS `campaign_customers_campaign_update` AFTER UPDATE OF `starts_at`, `ends_at`, `holdout_basis_points` ON `campaigns`
WHEN old.`starts_at` IS NOT new.`starts_at` OR old.`ends_at` IS NOT new.`ends_at`
  OR (old.`holdout_basis_points` > 0) <> (new.`holdout_basis_points` > 0)
BEGIN
  DELETE FROM `rollup_campaign_customers` WHERE `tenant_id` = old.`tenant_id` AND `campaign_id` = old.`id`;
  INSERT INTO `rollup_campaign_customers` (`tenant_id`, `campaign_id`, `customer_id`, `sales`, `paid_cents`, `paid_sub`)
    SELECT new.`tenant_id`, new.`id`, s.`customer_id`, count(*), sum(fideliza_cents(s.`amount_payable`)), sum(fideliza_sub(s.`amount_payable`))
    FROM `sales` s WHERE new.`holdout_basis_points` > 0 AND s.`tenant_id` = new.`tenant_id`
      AND s.`sold_at` >= new.`starts_at` AND s.`sold_at` < new.`ends_at` AND s.`customer_id` IS NOT NULL AND s.`status` <> 'CANCELLED'
    GROUP BY s.`customer_id`;
END;
CREATE TRIGGER IF NOT EXISTS `campaign_customers_campaign_delete` AFTER DELETE ON `campaigns`
WHEN old.`holdout_basis_points` > 0
BEGIN
  DELETE FROM `rollup_campaign_customers` WHERE `tenant_id` = old.`tenant_id` AND `campaign_id` = old.`id`;
END;

-- A rebuild of the tenant's rollups counts these again too.
CREATE TRIGGER IF NOT EXISTS `rollup_rebuild_campaign_customers` AFTER INSERT ON `rollup_rebuilds` BEGIN
  DELETE FROM `rollup_campaign_customers` WHERE `tenant_id` = new.`tenant_id`;
  INSERT INTO `rollup_campaign_customers` (`tenant_id`, `campaign_id`, `customer_id`, `sales`, `paid_cents`, `paid_sub`)
    SELECT new.`tenant_id`, c.`id`, s.`customer_id`, count(*), sum(fideliza_cents(s.`amount_payable`)), sum(fideliza_sub(s.`amount_payable`))
    FROM `campaigns` c JOIN `sales` s ON s.`tenant_id` = new.`tenant_id` AND s.`sold_at` >= c.`starts_at` AND s.`sold_at` < c.`ends_at`
    WHERE c.`tenant_id` = new.`tenant_id` AND c.`holdout_basis_points` > 0 AND s.`customer_id` IS NOT NULL AND s.`status` <> 'CANCELLED'
    GROUP BY c.`id`, s.`customer_id`;
END;
