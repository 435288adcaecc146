-- 0042 (issue 38): a rebuild of a tenant's rollups (the rebuild command, a
-- time zone change) counts the pairs of the customers' active days
-- set-based, from the days it has just counted, instead of through the
-- days' row triggers one day at a time (several minutes for a million
-- sales on the 2-core machine). The days' triggers stand aside while the
-- tenant's rollup_rebuilds row exists, which is for the rebuild's length.
-- Same rows as before (TestRollupsMatchRows).
DROP TRIGGER IF EXISTS `rollup_customer_day_added`;
DROP TRIGGER IF EXISTS `rollup_customer_day_removed`;
DROP TRIGGER IF EXISTS `rollup_rebuild`;
CREATE TRIGGER IF NOT EXISTS `rollup_customer_day_added` BEFORE INSERT ON `rollup_customer_days`
WHEN NOT EXISTS (SELECT 1 FROM `rollup_customer_days` WHERE `tenant_id` = new.`tenant_id` AND `customer_id` = new.`customer_id` AND `day` = new.`day`)
  AND NOT EXISTS (SELECT 1 FROM `rollup_rebuilds` WHERE `tenant_id` = new.`tenant_id`)
BEGIN
  UPDATE `rollup_active_pairs` SET `customers` = `customers` - 1 WHERE `tenant_id` = new.`tenant_id`
    AND `day` = (SELECT min(`day`) FROM `rollup_customer_days` WHERE `tenant_id` = new.`tenant_id` AND `customer_id` = new.`customer_id` AND `day` > new.`day`)
    AND `prev_day` = coalesce((SELECT max(`day`) FROM `rollup_customer_days` WHERE `tenant_id` = new.`tenant_id` AND `customer_id` = new.`customer_id` AND `day` < new.`day`), '');
  INSERT INTO `rollup_active_pairs` (`tenant_id`, `day`, `prev_day`, `customers`)
    SELECT new.`tenant_id`, n.`day`, new.`day`, 1 FROM (SELECT min(`day`) AS `day` FROM `rollup_customer_days`
      WHERE `tenant_id` = new.`tenant_id` AND `customer_id` = new.`customer_id` AND `day` > new.`day`) AS n WHERE n.`day` IS NOT NULL
    ON CONFLICT (`tenant_id`, `day`, `prev_day`) DO UPDATE SET `customers` = `rollup_active_pairs`.`customers` + 1;
  INSERT INTO `rollup_active_pairs` (`tenant_id`, `day`, `prev_day`, `customers`)
    VALUES (new.`tenant_id`, new.`day`, coalesce((SELECT max(`day`) FROM `rollup_customer_days`
      WHERE `tenant_id` = new.`tenant_id` AND `customer_id` = new.`customer_id` AND `day` < new.`day`), ''), 1)
    ON CONFLICT (`tenant_id`, `day`, `prev_day`) DO UPDATE SET `customers` = `rollup_active_pairs`.`customers` + 1;
END;
CREATE TRIGGER IF NOT EXISTS `rollup_customer_day_removed` BEFORE DELETE ON `rollup_customer_days`
WHEN NOT EXISTS (SELECT 1 FROM `rollup_rebuilds` WHERE `tenant_id` = old.`tenant_id`) BEGIN
  UPDATE `rollup_active_pairs` SET `customers` = `customers` - 1 WHERE `tenant_id` = old.`tenant_id` AND `day` = old.`day`
    AND `prev_day` = coalesce((SELECT max(`day`) FROM `rollup_customer_days` WHERE `tenant_id` = old.`tenant_id` AND `customer_id` = old.`customer_id` AND `day` < old.`day`), '');
  UPDATE `rollup_active_pairs` SET `customers` = `customers` - 1 WHERE `tenant_id` = old.`tenant_id` AND `prev_day` = old.`day`
    AND `day` = (SELECT min(`day`) FROM `rollup_customer_days` WHERE `tenant_id` = old.`tenant_id` AND `customer_id` = old.`customer_id` AND `day` > old.`day`);
  INSERT INTO `rollup_active_pairs` (`tenant_id`, `day`, `prev_day`, `customers`)
    SELECT old.`tenant_id`, n.`day`, coalesce((SELECT max(`day`) FROM `rollup_customer_days`
      WHERE `tenant_id` = old.`tenant_id` AND `customer_id` = old.`customer_id` AND `day` < old.`day`), ''), 1
    FROM (SELECT min(`day`) AS `day` FROM `rollup_customer_days`
      WHERE `tenant_id` = old.`tenant_id` AND `customer_id` = old.`customer_id` AND `day` > old.`day`) AS n WHERE n.`day` IS NOT NULL
    ON CONFLICT (`tenant_id`, `day`, `prev_day`) DO UPDATE SET `customers` = `rollup_active_pairs`.`customers` + 1;
END;
CREATE TRIGGER IF NOT EXISTS `rollup_rebuild` AFTER INSERT ON `rollup_rebuilds` BEGIN
  DELETE FROM `rollup_sales_days` WHERE `tenant_id` = new.`tenant_id`;
  DELETE FROM `rollup_campaign_days` WHERE `tenant_id` = new.`tenant_id`;
  DELETE FROM `rollup_points_days` WHERE `tenant_id` = new.`tenant_id`;
  DELETE FROM `rollup_customer_days` WHERE `tenant_id` = new.`tenant_id`;
  DELETE FROM `rollup_active_pairs` WHERE `tenant_id` = new.`tenant_id`;
  INSERT INTO `rollup_sales_days` (`tenant_id`, `day`, `store_id`, `sales`, `amount_cents`, `amount_sub`, `discount_cents`, `discount_sub`, `payable_cents`, `payable_sub`,
      `returned_cents`, `returned_sub`, `points_credited`, `points_reversed`, `cancelled`)
    SELECT s.`tenant_id`, fideliza_day(s.`sold_at`, t.`time_zone`) AS `d`, s.`store_id`, count(*), sum(fideliza_cents(s.`amount`)), sum(fideliza_sub(s.`amount`)),
      sum(fideliza_cents(s.`discount_amount`)), sum(fideliza_sub(s.`discount_amount`)), sum(fideliza_cents(s.`amount_payable`)), sum(fideliza_sub(s.`amount_payable`)), sum(fideliza_cents(s.`returned_amount`)), sum(fideliza_sub(s.`returned_amount`)),
      sum(s.`points_credited`), sum(s.`points_reversed`), sum(s.`status` = 'CANCELLED')
    FROM `sales` s JOIN `tenants` t ON t.`id` = s.`tenant_id` WHERE s.`tenant_id` = new.`tenant_id` GROUP BY `d`, s.`store_id`;
  INSERT INTO `rollup_campaign_days` (`tenant_id`, `campaign_id`, `day`, `redemptions`, `discount_cents`, `discount_sub`, `cashback_cents`, `cashback_sub`, `paid_cents`, `paid_sub`, `rolled_back`)
    SELECT r.`tenant_id`, r.`campaign_id`, fideliza_day(r.`created_at`, t.`time_zone`) AS `d`, count(*), sum(fideliza_cents(r.`discount_amount`)), sum(fideliza_sub(r.`discount_amount`)),
      sum(fideliza_cents(r.`cashback_amount`)), sum(fideliza_sub(r.`cashback_amount`)), sum(fideliza_cents(r.`amount_paid`)), sum(fideliza_sub(r.`amount_paid`)), sum(r.`rolled_back_at` IS NOT NULL)
    FROM `redemptions` r JOIN `tenants` t ON t.`id` = r.`tenant_id` WHERE r.`tenant_id` = new.`tenant_id` GROUP BY r.`campaign_id`, `d`;
  INSERT INTO `rollup_points_days` (`tenant_id`, `day`, `credited`, `bonus`, `debited`, `expired`, `adjusted`, `reversed`, `net`)
    SELECT e.`tenant_id`, fideliza_day(e.`created_at`, t.`time_zone`) AS `d`,
      sum(iif(e.`kind` = 'credit', e.`points`, 0)), sum(iif(e.`kind` = 'bonus', e.`points`, 0)), sum(iif(e.`kind` = 'debit', e.`points`, 0)),
      sum(iif(e.`kind` = 'expiration', e.`points`, 0)), sum(iif(e.`kind` = 'adjustment', e.`points`, 0)),
      sum(iif(e.`kind` = 'reversal', e.`points`, 0)), sum(e.`points`)
    FROM `points_entries` e JOIN `tenants` t ON t.`id` = e.`tenant_id` WHERE e.`tenant_id` = new.`tenant_id` GROUP BY `d`;
  INSERT INTO `rollup_customer_days` (`tenant_id`, `customer_id`, `day`, `events`)
    SELECT new.`tenant_id`, a.`customer_id`, fideliza_day(a.`at`, t.`time_zone`) AS `d`, count(*)
    FROM (SELECT `customer_id`, `sold_at` AS `at` FROM `sales` WHERE `tenant_id` = new.`tenant_id` AND `customer_id` IS NOT NULL
      UNION ALL SELECT `customer_id`, `created_at` FROM `redemptions` WHERE `tenant_id` = new.`tenant_id`
      UNION ALL SELECT `customer_id`, `created_at` FROM `points_entries` WHERE `tenant_id` = new.`tenant_id` AND `kind` IN ('credit', 'bonus', 'debit')) a
    JOIN `tenants` t ON t.`id` = new.`tenant_id` GROUP BY a.`customer_id`, `d`;
  INSERT INTO `rollup_active_pairs` (`tenant_id`, `day`, `prev_day`, `customers`)
    SELECT new.`tenant_id`, p.`day`, p.`prev_day`, count(*)
    FROM (SELECT c.`day`, coalesce(lag(c.`day`) OVER (PARTITION BY c.`customer_id` ORDER BY c.`day`), '') AS `prev_day`
      FROM `rollup_customer_days` c WHERE c.`tenant_id` = new.`tenant_id`) p GROUP BY p.`day`, p.`prev_day`;
  DELETE FROM `rollup_rebuilds` WHERE `tenant_id` = new.`tenant_id`;
END;
