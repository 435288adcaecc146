-- 0037 (issue 37, audiences' preview): each customer's processed sales (a
-- sale returned or cancelled whole is no purchase) by store, their count and
-- the latest sold_at, kept by triggers in the statement that writes a sale,
-- as the dashboards' rollups are (0027), so that the facts of a rule over
-- purchases are one row per customer and store rather than a scan of sales.
CREATE TABLE IF NOT EXISTS `rollup_customer_stores` (`tenant_id` text NOT NULL, `customer_id` text NOT NULL,
  `store_id` text NOT NULL, `purchases` integer NOT NULL DEFAULT 0, `last_sold_at` datetime NULL,
  PRIMARY KEY (`tenant_id`, `customer_id`, `store_id`));
INSERT INTO `rollup_customer_stores` (`tenant_id`, `customer_id`, `store_id`, `purchases`, `last_sold_at`)
  SELECT `tenant_id`, `customer_id`, `store_id`, count(*), max(`sold_at`) FROM `sales`
  WHERE `customer_id` IS NOT NULL AND `status` IN ('PROCESSED', 'PARTIALLY_RETURNED')
  GROUP BY `tenant_id`, `customer_id`, `store_id`
  ON CONFLICT DO NOTHING;
-- A purchase that appears adds one and may be the latest; one that goes
-- (returned or cancelled whole, moved, deleted) takes one off and, when it
-- was the latest, the latest is read again from the customer's sales there.
CREATE TRIGGER IF NOT EXISTS `customer_store_sale_insert` AFTER INSERT ON `sales`
WHEN new.`customer_id` IS NOT NULL AND new.`status` IN ('PROCESSED', 'PARTIALLY_RETURNED')
BEGIN
  INSERT INTO `rollup_customer_stores` (`tenant_id`, `customer_id`, `store_id`, `purchases`, `last_sold_at`)
    VALUES (new.`tenant_id`, new.`customer_id`, new.`store_id`, 1, new.`sold_at`)
    ON CONFLICT (`tenant_id`, `customer_id`, `store_id`) DO UPDATE SET `purchases` = `purchases` + 1,
      `last_sold_at` = max(`last_sold_at`, excluded.`last_sold_at`);
END;
CREATE TRIGGER IF NOT EXISTS `customer_store_sale_update` AFTER UPDATE OF `status`, `customer_id`, `store_id`, `sold_at` ON `sales`
WHEN (old.`customer_id` IS NOT NULL AND old.`status` IN ('PROCESSED', 'PARTIALLY_RETURNED'))
  <> (new.`customer_id` IS NOT NULL AND new.`status` IN ('PROCESSED', 'PARTIALLY_RETURNED'))
  OR old.`customer_id` IS NOT new.`customer_id` OR old.`store_id` IS NOT new.`store_id` OR old.`sold_at` IS NOT new.`sold_at`
BEGIN
  UPDATE `rollup_customer_stores` SET `purchases` = `purchases` - 1
    WHERE old.`status` IN ('PROCESSED', 'PARTIALLY_RETURNED')
      AND `tenant_id` = old.`tenant_id` AND `customer_id` = old.`customer_id` AND `store_id` = old.`store_id`;
  INSERT INTO `rollup_customer_stores` (`tenant_id`, `customer_id`, `store_id`, `purchases`, `last_sold_at`)
    SELECT new.`tenant_id`, new.`customer_id`, new.`store_id`, 1, new.`sold_at`
    WHERE new.`customer_id` IS NOT NULL AND new.`status` IN ('PROCESSED', 'PARTIALLY_RETURNED')
    ON CONFLICT (`tenant_id`, `customer_id`, `store_id`) DO UPDATE SET `purchases` = `purchases` + 1,
      `last_sold_at` = max(`last_sold_at`, excluded.`last_sold_at`);
  UPDATE `rollup_customer_stores` SET `last_sold_at` = (SELECT max(s.`sold_at`) FROM `sales` s
      WHERE s.`tenant_id` = old.`tenant_id` AND s.`customer_id` = old.`customer_id` AND s.`store_id` = old.`store_id`
        AND s.`status` IN ('PROCESSED', 'PARTIALLY_RETURNED'))
    WHERE old.`status` IN ('PROCESSED', 'PARTIALLY_RETURNED')
      AND `tenant_id` = old.`tenant_id` AND `customer_id` = old.`customer_id` AND `store_id` = old.`store_id`;
  DELETE FROM `rollup_customer_stores` WHERE `purchases` <= 0
    AND `tenant_id` = old.`tenant_id` AND `customer_id` = old.`customer_id` AND `store_id` = old.`store_id`;
END;
CREATE TRIGGER IF NOT EXISTS `customer_store_sale_delete` AFTER DELETE ON `sales`
WHEN old.`customer_id` IS NOT NULL AND old.`status` IN ('PROCESSED', 'PARTIALLY_RETURNED')
BEGIN
  UPDATE `rollup_customer_stores` SET `purchases` = `purchases` - 1, `last_sold_at` = (SELECT max(s.`sold_at`) FROM `sales` s
      WHERE s.`tenant_id` = old.`tenant_id` AND s.`customer_id` = old.`customer_id` AND s.`store_id` = old.`store_id`
        AND s.`status` IN ('PROCESSED', 'PARTIALLY_RETURNED'))
    WHERE `tenant_id` = old.`tenant_id` AND `customer_id` = old.`customer_id` AND `store_id` = old.`store_id`;
  DELETE FROM `rollup_customer_stores` WHERE `purchases` <= 0
    AND `tenant_id` = old.`tenant_id` AND `customer_id` = old.`customer_id` AND `store_id` = old.`store_id`;
END;
