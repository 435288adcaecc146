-- 0027 (issue 38): the dashboards read rollups, not every sale of the
-- period. Per tenant and local day (the tenant's time zone): sales per
-- store, redemptions per campaign, ledger movements per kind, and each
-- customer's active days. Money is integer cents plus the part below the
-- cent in 10^-8 R$ (the scale of the decimal columns), so sums stay exact
-- and fit 64 bits; points are integers. Triggers
-- keep them in the statement that changes the rows they summarise, so they
-- are exactly once with them whatever writes the rows. fideliza_day,
-- fideliza_cents and fideliza_sub are functions the service registers on
-- its SQLite connections (storage): the local day of an instant in an IANA
-- zone, and a decimal's whole cents and the rest in 10^-8 R$ (truncated
-- toward zero, so both carry its sign).
CREATE TABLE IF NOT EXISTS `rollup_sales_days` (`tenant_id` text NOT NULL, `day` text NOT NULL, `store_id` text NOT NULL,
  `sales` integer NOT NULL DEFAULT 0, `amount_cents` integer NOT NULL DEFAULT 0, `amount_sub` integer NOT NULL DEFAULT 0, `discount_cents` integer NOT NULL DEFAULT 0, `discount_sub` integer NOT NULL DEFAULT 0,
  `payable_cents` integer NOT NULL DEFAULT 0, `payable_sub` integer NOT NULL DEFAULT 0, `returned_cents` integer NOT NULL DEFAULT 0, `returned_sub` integer NOT NULL DEFAULT 0,
  `points_credited` integer NOT NULL DEFAULT 0, `points_reversed` integer NOT NULL DEFAULT 0,
  `cancelled` integer NOT NULL DEFAULT 0,
  PRIMARY KEY (`tenant_id`, `day`, `store_id`));
CREATE TABLE IF NOT EXISTS `rollup_campaign_days` (`tenant_id` text NOT NULL, `campaign_id` text NOT NULL, `day` text NOT NULL,
  `redemptions` integer NOT NULL DEFAULT 0, `discount_cents` integer NOT NULL DEFAULT 0, `discount_sub` integer NOT NULL DEFAULT 0, `cashback_cents` integer NOT NULL DEFAULT 0, `cashback_sub` integer NOT NULL DEFAULT 0,
  `paid_cents` integer NOT NULL DEFAULT 0, `paid_sub` integer NOT NULL DEFAULT 0, `rolled_back` integer NOT NULL DEFAULT 0,
  PRIMARY KEY (`tenant_id`, `campaign_id`, `day`));
CREATE TABLE IF NOT EXISTS `rollup_points_days` (`tenant_id` text NOT NULL, `day` text NOT NULL,
  `credited` integer NOT NULL DEFAULT 0, `bonus` integer NOT NULL DEFAULT 0, `debited` integer NOT NULL DEFAULT 0,
  `expired` integer NOT NULL DEFAULT 0, `adjusted` integer NOT NULL DEFAULT 0, `reversed` integer NOT NULL DEFAULT 0,
  `net` integer NOT NULL DEFAULT 0,
  PRIMARY KEY (`tenant_id`, `day`));
-- A customer's active days (a sale, a redemption, points earned or spent)
-- with the number of events of each; and, for distinct counts over any
-- days, how many customers were active on day after last being active on
-- prev_day ('' for never): the customers active within [d1, d2] are those
-- of the rows with d1 <= day <= d2 and prev_day < d1.
CREATE TABLE IF NOT EXISTS `rollup_customer_days` (`tenant_id` text NOT NULL, `customer_id` text NOT NULL, `day` text NOT NULL,
  `events` integer NOT NULL DEFAULT 0,
  PRIMARY KEY (`tenant_id`, `customer_id`, `day`));
CREATE TABLE IF NOT EXISTS `rollup_active_pairs` (`tenant_id` text NOT NULL, `day` text NOT NULL, `prev_day` text NOT NULL,
  `customers` integer NOT NULL DEFAULT 0,
  PRIMARY KEY (`tenant_id`, `day`, `prev_day`));
-- Inserting a tenant here rebuilds its rollups from the rows (and the row
-- leaves): the rebuild command, the time zone setting and this migration.
CREATE TABLE IF NOT EXISTS `rollup_rebuilds` (`tenant_id` text NOT NULL);

CREATE TRIGGER IF NOT EXISTS `rollup_customer_day_added` BEFORE INSERT ON `rollup_customer_days`
WHEN NOT EXISTS (SELECT 1 FROM `rollup_customer_days` WHERE `tenant_id` = new.`tenant_id` AND `customer_id` = new.`customer_id` AND `day` = new.`day`)
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
CREATE TRIGGER IF NOT EXISTS `rollup_customer_day_removed` BEFORE DELETE ON `rollup_customer_days` BEGIN
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

-- Sales: counted on the local day they were sold, by store; a return or a
-- cancellation changes the day of the sale.
CREATE TRIGGER IF NOT EXISTS `rollup_sale_insert` AFTER INSERT ON `sales` BEGIN
  INSERT INTO `rollup_sales_days` (`tenant_id`, `day`, `store_id`, `sales`, `amount_cents`, `amount_sub`, `discount_cents`, `discount_sub`, `payable_cents`, `payable_sub`,
      `returned_cents`, `returned_sub`, `points_credited`, `points_reversed`, `cancelled`)
    VALUES (new.`tenant_id`, fideliza_day(new.`sold_at`, (SELECT `time_zone` FROM `tenants` WHERE `id` = new.`tenant_id`)), new.`store_id`,
      1, fideliza_cents(new.`amount`), fideliza_sub(new.`amount`), fideliza_cents(new.`discount_amount`), fideliza_sub(new.`discount_amount`), fideliza_cents(new.`amount_payable`), fideliza_sub(new.`amount_payable`),
      fideliza_cents(new.`returned_amount`), fideliza_sub(new.`returned_amount`), new.`points_credited`, new.`points_reversed`, new.`status` = 'CANCELLED')
    ON CONFLICT (`tenant_id`, `day`, `store_id`) DO UPDATE SET `sales` = `rollup_sales_days`.`sales` + 1,
      `amount_cents` = `rollup_sales_days`.`amount_cents` + excluded.`amount_cents`, `amount_sub` = `rollup_sales_days`.`amount_sub` + excluded.`amount_sub`,
      `discount_cents` = `rollup_sales_days`.`discount_cents` + excluded.`discount_cents`, `discount_sub` = `rollup_sales_days`.`discount_sub` + excluded.`discount_sub`,
      `payable_cents` = `rollup_sales_days`.`payable_cents` + excluded.`payable_cents`, `payable_sub` = `rollup_sales_days`.`payable_sub` + excluded.`payable_sub`,
      `returned_cents` = `rollup_sales_days`.`returned_cents` + excluded.`returned_cents`, `returned_sub` = `rollup_sales_days`.`returned_sub` + excluded.`returned_sub`,
      `points_credited` = `rollup_sales_days`.`points_credited` + excluded.`points_credited`,
      `points_reversed` = `rollup_sales_days`.`points_reversed` + excluded.`points_reversed`,
      `cancelled` = `rollup_sales_days`.`cancelled` + excluded.`cancelled`;
  INSERT INTO `rollup_customer_days` (`tenant_id`, `customer_id`, `day`, `events`)
    SELECT new.`tenant_id`, new.`customer_id`, fideliza_day(new.`sold_at`, (SELECT `time_zone` FROM `tenants` WHERE `id` = new.`tenant_id`)), 1
    WHERE new.`customer_id` IS NOT NULL
    ON CONFLICT (`tenant_id`, `customer_id`, `day`) DO UPDATE SET `events` = `rollup_customer_days`.`events` + 1;
END;
CREATE TRIGGER IF NOT EXISTS `rollup_sale_update` AFTER UPDATE OF `status`, `returned_amount`, `points_credited`, `points_reversed`, `customer_id` ON `sales`
WHEN old.`status` IS NOT new.`status` OR old.`returned_amount` IS NOT new.`returned_amount` OR old.`points_credited` IS NOT new.`points_credited`
  OR old.`points_reversed` IS NOT new.`points_reversed` OR old.`customer_id` IS NOT new.`customer_id`
BEGIN
  UPDATE `rollup_sales_days` SET
      `returned_cents` = `returned_cents` + fideliza_cents(new.`returned_amount`) - fideliza_cents(old.`returned_amount`), `returned_sub` = `returned_sub` + fideliza_sub(new.`returned_amount`) - fideliza_sub(old.`returned_amount`),
      `points_credited` = `points_credited` + new.`points_credited` - old.`points_credited`,
      `points_reversed` = `points_reversed` + new.`points_reversed` - old.`points_reversed`,
      `cancelled` = `cancelled` + (new.`status` = 'CANCELLED') - (old.`status` = 'CANCELLED')
    WHERE `tenant_id` = new.`tenant_id` AND `store_id` = new.`store_id`
      AND `day` = fideliza_day(new.`sold_at`, (SELECT `time_zone` FROM `tenants` WHERE `id` = new.`tenant_id`));
  INSERT INTO `rollup_customer_days` (`tenant_id`, `customer_id`, `day`, `events`)
    SELECT new.`tenant_id`, new.`customer_id`, fideliza_day(new.`sold_at`, (SELECT `time_zone` FROM `tenants` WHERE `id` = new.`tenant_id`)), 1
    WHERE new.`customer_id` IS NOT NULL AND new.`customer_id` IS NOT old.`customer_id`
    ON CONFLICT (`tenant_id`, `customer_id`, `day`) DO UPDATE SET `events` = `rollup_customer_days`.`events` + 1;
  UPDATE `rollup_customer_days` SET `events` = `events` - 1
    WHERE old.`customer_id` IS NOT new.`customer_id` AND `tenant_id` = old.`tenant_id` AND `customer_id` = old.`customer_id`
      AND `day` = fideliza_day(old.`sold_at`, (SELECT `time_zone` FROM `tenants` WHERE `id` = old.`tenant_id`));
  DELETE FROM `rollup_customer_days` WHERE `events` <= 0 AND `tenant_id` = old.`tenant_id` AND `customer_id` = old.`customer_id`;
END;
CREATE TRIGGER IF NOT EXISTS `rollup_sale_delete` AFTER DELETE ON `sales` BEGIN
  UPDATE `rollup_sales_days` SET `sales` = `sales` - 1, `amount_cents` = `amount_cents` - fideliza_cents(old.`amount`), `amount_sub` = `amount_sub` - fideliza_sub(old.`amount`),
      `discount_cents` = `discount_cents` - fideliza_cents(old.`discount_amount`), `discount_sub` = `discount_sub` - fideliza_sub(old.`discount_amount`), `payable_cents` = `payable_cents` - fideliza_cents(old.`amount_payable`), `payable_sub` = `payable_sub` - fideliza_sub(old.`amount_payable`),
      `returned_cents` = `returned_cents` - fideliza_cents(old.`returned_amount`), `returned_sub` = `returned_sub` - fideliza_sub(old.`returned_amount`), `points_credited` = `points_credited` - old.`points_credited`,
      `points_reversed` = `points_reversed` - old.`points_reversed`, `cancelled` = `cancelled` - (old.`status` = 'CANCELLED')
    WHERE `tenant_id` = old.`tenant_id` AND `store_id` = old.`store_id`
      AND `day` = fideliza_day(old.`sold_at`, (SELECT `time_zone` FROM `tenants` WHERE `id` = old.`tenant_id`));
  UPDATE `rollup_customer_days` SET `events` = `events` - 1 WHERE `tenant_id` = old.`tenant_id` AND `customer_id` = old.`customer_id`
    AND `day` = fideliza_day(old.`sold_at`, (SELECT `time_zone` FROM `tenants` WHERE `id` = old.`tenant_id`));
  DELETE FROM `rollup_customer_days` WHERE `events` <= 0 AND `tenant_id` = old.`tenant_id` AND `customer_id` = old.`customer_id`;
END;

-- Redemptions: counted on the local day they were made, by campaign; a
-- rollback counts on the redemption's day.
CREATE TRIGGER IF NOT EXISTS `rollup_redemption_insert` AFTER INSERT ON `redemptions` BEGIN
  INSERT INTO `rollup_campaign_days` (`tenant_id`, `campaign_id`, `day`, `redemptions`, `discount_cents`, `discount_sub`, `cashback_cents`, `cashback_sub`, `paid_cents`, `paid_sub`, `rolled_back`)
    VALUES (new.`tenant_id`, new.`campaign_id`, fideliza_day(new.`created_at`, (SELECT `time_zone` FROM `tenants` WHERE `id` = new.`tenant_id`)),
      1, fideliza_cents(new.`discount_amount`), fideliza_sub(new.`discount_amount`), fideliza_cents(new.`cashback_amount`), fideliza_sub(new.`cashback_amount`), fideliza_cents(new.`amount_paid`), fideliza_sub(new.`amount_paid`), new.`rolled_back_at` IS NOT NULL)
    ON CONFLICT (`tenant_id`, `campaign_id`, `day`) DO UPDATE SET `redemptions` = `rollup_campaign_days`.`redemptions` + 1,
      `discount_cents` = `rollup_campaign_days`.`discount_cents` + excluded.`discount_cents`, `discount_sub` = `rollup_campaign_days`.`discount_sub` + excluded.`discount_sub`,
      `cashback_cents` = `rollup_campaign_days`.`cashback_cents` + excluded.`cashback_cents`, `cashback_sub` = `rollup_campaign_days`.`cashback_sub` + excluded.`cashback_sub`,
      `paid_cents` = `rollup_campaign_days`.`paid_cents` + excluded.`paid_cents`, `paid_sub` = `rollup_campaign_days`.`paid_sub` + excluded.`paid_sub`,
      `rolled_back` = `rollup_campaign_days`.`rolled_back` + excluded.`rolled_back`;
  INSERT INTO `rollup_customer_days` (`tenant_id`, `customer_id`, `day`, `events`)
    VALUES (new.`tenant_id`, new.`customer_id`, fideliza_day(new.`created_at`, (SELECT `time_zone` FROM `tenants` WHERE `id` = new.`tenant_id`)), 1)
    ON CONFLICT (`tenant_id`, `customer_id`, `day`) DO UPDATE SET `events` = `rollup_customer_days`.`events` + 1;
END;
CREATE TRIGGER IF NOT EXISTS `rollup_redemption_update` AFTER UPDATE OF `rolled_back_at` ON `redemptions`
WHEN (old.`rolled_back_at` IS NULL) <> (new.`rolled_back_at` IS NULL)
BEGIN
  UPDATE `rollup_campaign_days` SET `rolled_back` = `rolled_back` + (new.`rolled_back_at` IS NOT NULL) - (old.`rolled_back_at` IS NOT NULL)
    WHERE `tenant_id` = new.`tenant_id` AND `campaign_id` = new.`campaign_id`
      AND `day` = fideliza_day(new.`created_at`, (SELECT `time_zone` FROM `tenants` WHERE `id` = new.`tenant_id`));
END;
CREATE TRIGGER IF NOT EXISTS `rollup_redemption_delete` AFTER DELETE ON `redemptions` BEGIN
  UPDATE `rollup_campaign_days` SET `redemptions` = `redemptions` - 1, `discount_cents` = `discount_cents` - fideliza_cents(old.`discount_amount`), `discount_sub` = `discount_sub` - fideliza_sub(old.`discount_amount`),
      `cashback_cents` = `cashback_cents` - fideliza_cents(old.`cashback_amount`), `cashback_sub` = `cashback_sub` - fideliza_sub(old.`cashback_amount`), `paid_cents` = `paid_cents` - fideliza_cents(old.`amount_paid`), `paid_sub` = `paid_sub` - fideliza_sub(old.`amount_paid`),
      `rolled_back` = `rolled_back` - (old.`rolled_back_at` IS NOT NULL)
    WHERE `tenant_id` = old.`tenant_id` AND `campaign_id` = old.`campaign_id`
      AND `day` = fideliza_day(old.`created_at`, (SELECT `time_zone` FROM `tenants` WHERE `id` = old.`tenant_id`));
  UPDATE `rollup_customer_days` SET `events` = `events` - 1 WHERE `tenant_id` = old.`tenant_id` AND `customer_id` = old.`customer_id`
    AND `day` = fideliza_day(old.`created_at`, (SELECT `time_zone` FROM `tenants` WHERE `id` = old.`tenant_id`));
  DELETE FROM `rollup_customer_days` WHERE `events` <= 0 AND `tenant_id` = old.`tenant_id` AND `customer_id` = old.`customer_id`;
END;

-- Ledger movements (entries are never updated): their points by kind on
-- their local day; earning and spending are the customer's activity.
CREATE TRIGGER IF NOT EXISTS `rollup_points_insert` AFTER INSERT ON `points_entries` BEGIN
  INSERT INTO `rollup_points_days` (`tenant_id`, `day`, `credited`, `bonus`, `debited`, `expired`, `adjusted`, `reversed`, `net`)
    VALUES (new.`tenant_id`, fideliza_day(new.`created_at`, (SELECT `time_zone` FROM `tenants` WHERE `id` = new.`tenant_id`)),
      iif(new.`kind` = 'credit', new.`points`, 0), iif(new.`kind` = 'bonus', new.`points`, 0), iif(new.`kind` = 'debit', new.`points`, 0),
      iif(new.`kind` = 'expiration', new.`points`, 0), iif(new.`kind` = 'adjustment', new.`points`, 0), iif(new.`kind` = 'reversal', new.`points`, 0),
      new.`points`)
    ON CONFLICT (`tenant_id`, `day`) DO UPDATE SET `credited` = `rollup_points_days`.`credited` + excluded.`credited`,
      `bonus` = `rollup_points_days`.`bonus` + excluded.`bonus`, `debited` = `rollup_points_days`.`debited` + excluded.`debited`,
      `expired` = `rollup_points_days`.`expired` + excluded.`expired`, `adjusted` = `rollup_points_days`.`adjusted` + excluded.`adjusted`,
      `reversed` = `rollup_points_days`.`reversed` + excluded.`reversed`, `net` = `rollup_points_days`.`net` + excluded.`net`;
  INSERT INTO `rollup_customer_days` (`tenant_id`, `customer_id`, `day`, `events`)
    SELECT new.`tenant_id`, new.`customer_id`, fideliza_day(new.`created_at`, (SELECT `time_zone` FROM `tenants` WHERE `id` = new.`tenant_id`)), 1
    WHERE new.`kind` IN ('credit', 'bonus', 'debit')
    ON CONFLICT (`tenant_id`, `customer_id`, `day`) DO UPDATE SET `events` = `rollup_customer_days`.`events` + 1;
END;
CREATE TRIGGER IF NOT EXISTS `rollup_points_delete` AFTER DELETE ON `points_entries` BEGIN
  UPDATE `rollup_points_days` SET `credited` = `credited` - iif(old.`kind` = 'credit', old.`points`, 0),
      `bonus` = `bonus` - iif(old.`kind` = 'bonus', old.`points`, 0), `debited` = `debited` - iif(old.`kind` = 'debit', old.`points`, 0),
      `expired` = `expired` - iif(old.`kind` = 'expiration', old.`points`, 0), `adjusted` = `adjusted` - iif(old.`kind` = 'adjustment', old.`points`, 0),
      `reversed` = `reversed` - iif(old.`kind` = 'reversal', old.`points`, 0), `net` = `net` - old.`points`
    WHERE `tenant_id` = old.`tenant_id` AND `day` = fideliza_day(old.`created_at`, (SELECT `time_zone` FROM `tenants` WHERE `id` = old.`tenant_id`));
  UPDATE `rollup_customer_days` SET `events` = `events` - 1 WHERE old.`kind` IN ('credit', 'bonus', 'debit')
    AND `tenant_id` = old.`tenant_id` AND `customer_id` = old.`customer_id`
    AND `day` = fideliza_day(old.`created_at`, (SELECT `time_zone` FROM `tenants` WHERE `id` = old.`tenant_id`));
  DELETE FROM `rollup_customer_days` WHERE `events` <= 0 AND `tenant_id` = old.`tenant_id` AND `customer_id` = old.`customer_id`;
END;

-- A rebuild: the tenant's rollups again from its rows, in its time zone.
CREATE TRIGGER IF NOT EXISTS `rollup_rebuild` AFTER INSERT ON `rollup_rebuilds` BEGIN
  DELETE FROM `rollup_sales_days` WHERE `tenant_id` = new.`tenant_id`;
  DELETE FROM `rollup_campaign_days` WHERE `tenant_id` = new.`tenant_id`;
  DELETE FROM `rollup_points_days` WHERE `tenant_id` = new.`tenant_id`;
  DELETE FROM `rollup_customer_days` WHERE `tenant_id` = new.`tenant_id`;
  DELETE FROM `rollup_active_pairs` WHERE `tenant_id` = new.`tenant_id`; -- after the days, whose triggers move pairs
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
    JOIN `tenants` t ON t.`id` = new.`tenant_id` GROUP BY a.`customer_id`, `d` ORDER BY a.`customer_id`, `d`;
  DELETE FROM `rollup_rebuilds` WHERE `tenant_id` = new.`tenant_id`;
END;
-- A new time zone moves every instant to the day of the new zone.
CREATE TRIGGER IF NOT EXISTS `rollup_time_zone` AFTER UPDATE OF `time_zone` ON `tenants` WHEN old.`time_zone` IS NOT new.`time_zone` BEGIN
  INSERT INTO `rollup_rebuilds` (`tenant_id`) VALUES (new.`id`);
END;
INSERT INTO `rollup_rebuilds` (`tenant_id`) SELECT `id` FROM `tenants`;

-- Time-ordered lists and dashboards read a tenant's rows by instant. Every
-- statement here can run again (a test replays the migrations after 0025).
CREATE INDEX IF NOT EXISTS `sale_tenant_id_sold_at` ON `sales` (`tenant_id`, `sold_at`);
CREATE INDEX IF NOT EXISTS `redemption_tenant_id_created_at` ON `redemptions` (`tenant_id`, `created_at`);
CREATE INDEX IF NOT EXISTS `pointsentry_tenant_id_created_at` ON `points_entries` (`tenant_id`, `created_at`);
