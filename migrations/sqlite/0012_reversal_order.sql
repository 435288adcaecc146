-- 0012: a reversal of an order's points names the order it undoes.
ALTER TABLE `points_entries` ADD COLUMN `order_id` text NULL;
